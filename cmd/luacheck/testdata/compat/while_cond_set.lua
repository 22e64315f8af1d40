local item = redis.call("LPOP", KEYS[1])
while item do
  redis.call("RPUSH", KEYS[2], item)
  item = redis.call("LPOP", KEYS[1])
end
local x
repeat
  x = redis.call("INCR", KEYS[3])
until x > 3
return x
