local i = 0
for i = 1, 3 do
  redis.call("INCR", KEYS[1])
end
for _, v in ipairs(ARGV) do
  for _, v in ipairs(KEYS) do
    redis.call("GET", v)
  end
end
return i
