for i = 1, 10 do
  redis.call("INCR", KEYS[1])
end
for k, v in pairs(ARGV) do
  redis.call("SET", KEYS[1], v)
end
for k, v in pairs(KEYS) do
  redis.call("DEL", k)
end
return 1
