local _ = redis.call("GET", KEYS[1])
local _a = 1
local __ = 2
for _, _ in pairs(ARGV) do end
local function f(_, b, _c)
  return b
end
return f(1, 2, 3)
