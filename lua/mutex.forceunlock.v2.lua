-- name: mutex.forceunlock
-- version: 2
-- description: Remove a mutex's holder whoever it is, for operators freeing a stuck lock, and wake the waiters.
-- keys: lock
-- args: channel publish
-- returns: 1 when a holder was removed, 0 when the lock was already free
--
-- The holder is not asked: its next renewal or Unlock finds the lock gone
-- (or held by someone else) and reports the lease lost.
--
-- Version 2: the hash stays without its owner until the removed lease would
-- have run out, keeping the last fencing token (field fence), as a release
-- does since mutex.release@3, so the next owner's token is larger even
-- within the same microsecond; and publish is PUBLISH or SPUBLISH, so that
-- on a cluster the wake-up stays on the lock's shard.

local lock = KEYS[1]
local channel, publish = ARGV[1], ARGV[2]

if publish ~= 'PUBLISH' and publish ~= 'SPUBLISH' then
  return redis.error_reply('ERR publish must be PUBLISH or SPUBLISH')
end
if redis.call('HDEL', lock, 'owner', 'count', 'meta', 'kind', 'attempt', 'granted', 'waiting') == 0 then
  return 0
end
-- The same message an Unlock sends, so waiters try at once.
redis.call(publish, channel, 'released')
return 1
