-- name: mutex.extend
-- version: 2
-- description: Reset a mutex's lease to a new length, when the caller's own hold is still there.
-- keys: lock
-- args: owner ttl_ms lease_attempt
-- returns: 1 when extended, 0 when another owner (or another call of this owner) holds it, -1 when no one does (the lease expired)
--
-- Version 2 adds lease_attempt: the attempt id of the call that took the
-- hold (mutex.acquire@4 records it in the lock hash, field attempt, and
-- mutex.release@4 records the attempt a hand-over went to). Calls that
-- share an owner token are then told apart: after one call's lease ran out
-- and another call of the same owner took the lock, the first call's
-- watchdog no longer renews the second call's hold as if it were its own.
-- An empty lease_attempt, or a hold without an attempt (an RWMutex writer,
-- a grant by mutex.release@3), extends any hold of the owner, as version 1
-- did: a reentrant owner's calls are one holder.

local lock = KEYS[1]
local owner, ttl, lease_attempt = ARGV[1], ARGV[2], ARGV[3]

local held = redis.call('HMGET', lock, 'owner', 'attempt')
if not held[1] then
  return -1
end
if held[1] ~= owner then
  return 0
end
if lease_attempt ~= '' and held[2] and held[2] ~= '' and held[2] ~= lease_attempt then
  return 0
end
redis.call('PEXPIRE', lock, ttl)
return 1
