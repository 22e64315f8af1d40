local v = redis.call("GET", KEYS[1])
if ARGV[1] then
  v = 1
else
  v = 2
end
local w = 1
if ARGV[2] then
  w = 3
end
return {v, w}
