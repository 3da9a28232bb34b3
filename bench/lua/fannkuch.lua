-- Fannkuch-redux: every permutation of 1..n (in rotation order), each
-- flipped until 1 comes first; prints the checksum and the most flips.
local n = tonumber(arg and arg[1]) or 9

local function count_flips(perm, work)
  for i = 1, n do work[i] = perm[i] end
  local flips, first = 0, work[1]
  while first ~= 1 do
    local i, j = 1, first
    while i < j do work[i], work[j] = work[j], work[i]; i = i + 1; j = j - 1 end
    flips = flips + 1
    first = work[1]
  end
  return flips
end

local function fannkuch()
  local perm, count, work = {}, {}, {}
  for i = 1, n do perm[i] = i; count[i] = i end
  local checksum, maxflips, index = 0, 0, 0
  while true do
    local f = count_flips(perm, work)
    if f > maxflips then maxflips = f end
    if index % 2 == 0 then checksum = checksum + f else checksum = checksum - f end
    index = index + 1
    -- Next permutation: rotate the shortest prefix whose counter allows it;
    -- a prefix of length r returns to its start after r rotations.
    local r = 2
    while true do
      if r > n then return checksum, maxflips end
      local first = perm[1]
      for i = 1, r - 1 do perm[i] = perm[i + 1] end
      perm[r] = first
      count[r] = count[r] - 1
      if count[r] > 0 then break end
      count[r] = r
      r = r + 1
    end
  end
end

local sum, flips = fannkuch()
print(string.format("%d\nPfannkuchen(%d) = %d", sum, n, flips))
