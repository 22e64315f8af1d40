for i = 1, 3 do
  break
  redis.call("SET", KEYS[1], i)
end
while true do
  redis.call("GET", KEYS[1])
end
return 1
