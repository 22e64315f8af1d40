-- name: hashlock.release
-- version: 1
-- description: Seed design in the style of a reentrant hash lock: give back one hold, deleting the lock with the last one.
-- keys: lock
-- args: owner
-- returns: 1 when the lock became free, 0 when holds remain, nil when the caller held nothing

if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then
  return nil
end
if redis.call('HINCRBY', KEYS[1], ARGV[1], -1) > 0 then
  return 0
end
redis.call('DEL', KEYS[1])
return 1
