local n = 0
repeat
  local done = redis.call("LPOP", KEYS[1])
  n = n + 1
until not done or n > 10
repeat
  local unused_in_repeat = 1
until true
return n
