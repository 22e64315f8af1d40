local a = 1
local a = 2
local function f(x)
  local x = x + 1
  return x
end
for i = 1, 2 do
  local i = i * 2
  redis.call("SET", KEYS[1], i)
end
return a + f(1)
