-- name: counter.lock
-- version: 1
-- description: Seed design (flawed on purpose): take the write hold when no writer is in and the reader counter is not positive.
-- keys: writer readers
-- args: owner
-- returns: 1 when the write hold is taken, 0 otherwise

if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
if (tonumber(redis.call('GET', KEYS[2])) or 0) > 0 then
  return 0
end
redis.call('SET', KEYS[1], ARGV[1])
return 1
