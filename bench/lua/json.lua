-- A JSON-like encoder and decoder over generated nested records: string
-- building, character dispatch, recursion, tables as maps and arrays.
local n = tonumber(arg and arg[1]) or 3000
local seed = 7
local function rand(m) seed = (seed * 16807) % 2147483647; return seed % m end

local function encode(v, out)
  local t = type(v)
  if t == "table" then
    if v[1] ~= nil or next(v) == nil then
      out[#out + 1] = "["
      for i = 1, #v do
        if i > 1 then out[#out + 1] = "," end
        encode(v[i], out)
      end
      out[#out + 1] = "]"
    else
      local keys = {}
      for k in pairs(v) do keys[#keys + 1] = k end
      table.sort(keys)
      out[#out + 1] = "{"
      for i = 1, #keys do
        if i > 1 then out[#out + 1] = "," end
        out[#out + 1] = string.format("%q:", keys[i])
        encode(v[keys[i]], out)
      end
      out[#out + 1] = "}"
    end
  elseif t == "string" then out[#out + 1] = string.format("%q", v)
  elseif t == "boolean" then out[#out + 1] = v and "true" or "false"
  else out[#out + 1] = string.format("%d", v) end
end

local decode_value
local function skip(s, i)
  local c = string.byte(s, i)
  while c == 32 do i = i + 1; c = string.byte(s, i) end
  return i
end
local function decode_string(s, i)
  local j = string.find(s, '"', i + 1, true)
  return string.sub(s, i + 1, j - 1), j + 1
end
local function decode_array(s, i)
  local a = {}
  i = skip(s, i + 1)
  if string.byte(s, i) == 93 then return a, i + 1 end
  while true do
    local v
    v, i = decode_value(s, i)
    a[#a + 1] = v
    i = skip(s, i)
    local c = string.byte(s, i)
    i = i + 1
    if c == 93 then return a, i end
  end
end
local function decode_object(s, i)
  local o = {}
  i = skip(s, i + 1)
  if string.byte(s, i) == 125 then return o, i + 1 end
  while true do
    local k, v
    k, i = decode_string(s, skip(s, i))
    i = skip(s, i) + 1
    v, i = decode_value(s, skip(s, i))
    o[k] = v
    i = skip(s, i)
    local c = string.byte(s, i)
    i = i + 1
    if c == 125 then return o, i end
  end
end
decode_value = function(s, i)
  local c = string.byte(s, i)
  if c == 123 then return decode_object(s, i)
  elseif c == 91 then return decode_array(s, i)
  elseif c == 34 then return decode_string(s, i)
  elseif c == 116 then return true, i + 4
  elseif c == 102 then return false, i + 5
  else
    local j = i
    while true do
      local d = string.byte(s, j)
      if not d or (d ~= 45 and (d < 48 or d > 57)) then break end
      j = j + 1
    end
    return tonumber(string.sub(s, i, j - 1)), j
  end
end

local records = {}
for i = 1, n do
  records[i] = { id = i, name = "item" .. rand(100000), ok = rand(2) == 0,
                 tags = { rand(10), rand(100), rand(1000) },
                 pos = { x = rand(640), y = rand(480) } }
end
local out = {}
encode(records, out)
local text = table.concat(out)
local back = decode_value(text, 1)
local sum = 0
for i = 1, #back do sum = sum + back[i].id + back[i].pos.x + back[i].tags[2] end
local out2 = {}
encode(back, out2)
print(#text, sum, table.concat(out2) == text)
