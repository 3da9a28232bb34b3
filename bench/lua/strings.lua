-- String building and pattern matching: concatenation, table.concat,
-- gsub/gmatch/find over generated text.
local n = tonumber(arg and arg[1]) or 20000
local seed = 42
local function rand(m) seed = (seed * 16807) % 2147483647; return seed % m end

local words = { "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta",
                "theta", "iota", "kappa", "lambda", "mu" }
local parts = {}
for i = 1, n do
  parts[#parts + 1] = words[rand(#words) + 1] .. tostring(rand(1000))
end
local text = table.concat(parts, " ")

local counts, distinct = {}, 0
for w in string.gmatch(text, "%a+") do
  if not counts[w] then distinct = distinct + 1; counts[w] = 0 end
  counts[w] = counts[w] + 1
end
local digits = 0
for d in string.gmatch(text, "%d+") do digits = digits + #d end
local replaced, k = string.gsub(text, "(%a+)(%d+)", "%2%1")
local s = ""
for i = 1, 2000 do s = s .. string.char(97 + rand(26)) end
local found, pos = 0, 1
while true do
  local a = string.find(s, "a[b-e]", pos)
  if not a then break end
  found = found + 1; pos = a + 1
end
print(distinct, digits, k, #replaced, found, counts.alpha or 0)
