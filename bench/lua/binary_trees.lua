-- Binary trees: allocation-heavy recursion (the Computer Language
-- Benchmarks Game's workload, written here for hwprof). Lua 5.1 and 5.4.
local depth = tonumber(arg and arg[1]) or 12

local function make(d)
  if d == 0 then return { false, false } end
  d = d - 1
  return { make(d), make(d) }
end

local function check(t)
  if not t[1] then return 1 end
  return 1 + check(t[1]) + check(t[2])
end

local mindepth = 4
local maxdepth = math.max(mindepth + 2, depth)
print(string.format("stretch tree of depth %d\t check: %d", maxdepth + 1,
                    check(make(maxdepth + 1))))
local long = make(maxdepth)
for d = mindepth, maxdepth, 2 do
  local iters = 2 ^ (maxdepth - d + mindepth)
  local sum = 0
  for _ = 1, iters do sum = sum + check(make(d)) end
  print(string.format("%d\t trees of depth %d\t check: %d", iters, d, sum))
end
print(string.format("long lived tree of depth %d\t check: %d", maxdepth,
                    check(long)))
