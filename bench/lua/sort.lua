-- Table-heavy sorting: table.sort with a Lua comparator over records,
-- and a hand-written merge sort over arrays of numbers.
local n = tonumber(arg and arg[1]) or 50000
local seed = 3
local function rand(m) seed = (seed * 16807) % 2147483647; return seed % m end

local recs = {}
for i = 1, n do recs[i] = { key = rand(1000000), idx = i } end
table.sort(recs, function(a, b)
  if a.key ~= b.key then return a.key < b.key end
  return a.idx < b.idx
end)

local function merge_sort(a, tmp, lo, hi)
  if hi - lo < 1 then return end
  local mid = math.floor((lo + hi) / 2)
  merge_sort(a, tmp, lo, mid)
  merge_sort(a, tmp, mid + 1, hi)
  local i, j, k = lo, mid + 1, lo
  while i <= mid and j <= hi do
    if a[i] <= a[j] then tmp[k] = a[i]; i = i + 1 else tmp[k] = a[j]; j = j + 1 end
    k = k + 1
  end
  while i <= mid do tmp[k] = a[i]; i = i + 1; k = k + 1 end
  while j <= hi do tmp[k] = a[j]; j = j + 1; k = k + 1 end
  for x = lo, hi do a[x] = tmp[x] end
end
local nums, tmp = {}, {}
for i = 1, n do nums[i] = rand(1000000) end
merge_sort(nums, tmp, 1, n)
local ok = true
for i = 2, n do if nums[i - 1] > nums[i] then ok = false end end
for i = 2, n do
  local a, b = recs[i - 1], recs[i]
  if a.key > b.key then ok = false end
end
print(ok, recs[1].key, recs[n].key, nums[1], nums[n])
