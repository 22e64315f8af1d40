local v = redis.call("GET", KEYS[1])
if not v then
  return nil
end
do
  return v
end
