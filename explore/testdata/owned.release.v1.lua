-- name: owned.release
-- version: 1
-- description: Release a SET NX PX lock only when the caller's token is still its value: compare and delete in one atomic step.
-- keys: lock
-- args: token
-- returns: 1 when the caller's lock was deleted, 0 when the lock is gone or someone else's

if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
