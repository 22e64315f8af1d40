-- name: counter.unlock
-- version: 1
-- description: Seed design (flawed on purpose): give back the write hold when the caller has it.
-- keys: writer
-- args: owner
-- returns: 1 when released, 0 when the caller did not hold it

if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
