-- name: mutex.forceunlock
-- version: 1
-- description: Remove a mutex's holder whoever it is, for operators freeing a stuck lock, and wake the waiters.
-- keys: lock
-- args: channel
-- returns: 1 when a holder was removed, 0 when the lock was already free
--
-- The holder is not asked: its next renewal or Unlock finds the lock gone
-- (or held by someone else) and reports the lease lost. The fencing counter
-- stays, so the next owner's token is still larger than the removed one's.

local lock = KEYS[1]
local channel = ARGV[1]

if redis.call('DEL', lock) == 0 then
  return 0
end
-- The same message an Unlock sends, so waiters try at once.
redis.call('PUBLISH', channel, 'released')
return 1
