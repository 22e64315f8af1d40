-- name: rw.forceunlock
-- version: 1
-- description: Remove every read hold of a read-write lock, whoever holds it, for operators freeing a lock whose readers are stuck, and wake the oldest waiting writer.
-- keys: readers holds waiting clients
-- args: channel publish notify_prefix
-- returns: the number of owners whose live read holds were removed (0 when no read hold was live)
--
-- The readers are not asked: at their next renewal (rw.rextend@1 replies
-- -1) or release (rw.runlock@4 replies -1) they find their hold gone and
-- report the lease lost. The fence key stays, so the next writer's token is
-- still larger than any token handed out before.
--
-- The waiters are woken as rw.runlock@4 wakes them when the last reader
-- leaves: the oldest live waiting writer (lowest waiter deadline) alone,
-- with "wake <owner>" on notify_prefix .. the client rw.lock@4 recorded for
-- it; "released" on channel when no live writer waits, or when the oldest
-- recorded no client (a writer of rw.lock@3). When no read hold is live,
-- nothing is written and no one is woken.

local readers, holds, waiting, clients = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local channel, publish, notify_prefix = ARGV[1], ARGV[2], ARGV[3]
if publish ~= 'PUBLISH' and publish ~= 'SPUBLISH' then
  return redis.error_reply('ERR publish must be PUBLISH or SPUBLISH')
end

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

local removed = redis.call('ZCOUNT', readers, '(' .. now, '+inf')
if removed == 0 then
  return 0
end
-- Entries whose deadline passed go too: they hold nothing already.
redis.call('DEL', readers, holds)

local head = redis.call('ZRANGEBYSCORE', waiting, '(' .. now, '+inf', 'LIMIT', 0, 1)[1]
local client = head and redis.call('HGET', clients, head)
if client then
  redis.call(publish, notify_prefix .. client, 'wake ' .. head)
else
  redis.call(publish, channel, 'released')
end
return removed
