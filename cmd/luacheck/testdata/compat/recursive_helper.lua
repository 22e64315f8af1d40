-- A local function called only from an unused recursive function is not
-- reported itself: removing the recursive one removes its only caller.
-- One that is recursive itself is reported as well (its own cycle).
local function helper(x)
  return x + 1
end
local function countdown(n)
  if n > 0 then
    return countdown(helper(n) - 2)
  end
  return 0
end
local function walk(n)
  if n > 0 then return walk(n - 1) end
  return 0
end
local function outer(n)
  if n > 0 then return outer(walk(n)) end
  return 0
end
local function leaf() return 1 end
local function uses_leaf() return leaf() end
return uses_leaf
