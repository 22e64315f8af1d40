-- name: rw.leave
-- version: 3
-- description: Take a writer that stopped waiting out of a read-write lock's waiting set, so it holds back no readers.
-- keys: waiting clients
-- args: owner channel publish
-- returns: 1 when the writer was waiting, 0 when it was not
--
-- Readers held back by this writer are told to retry at once.
--
-- Version 3: the writer's client, recorded by rw.lock@4 so that a release
-- wakes it alone, leaves with it: a TryLock that found the lock held waits
-- for nothing, and its entry would otherwise stay until the hash expires,
-- which a steady stream of waiting writers keeps putting off.
--
-- Version 2: publish is PUBLISH, or SPUBLISH on a cluster with sharded pub/sub.

local waiting, clients = KEYS[1], KEYS[2]
local owner, channel, publish = ARGV[1], ARGV[2], ARGV[3]
if publish ~= 'PUBLISH' and publish ~= 'SPUBLISH' then
  return redis.error_reply('ERR publish must be PUBLISH or SPUBLISH')
end

redis.call('HDEL', clients, owner)
local removed = redis.call('ZREM', waiting, owner)
if removed == 1 then
  redis.call(publish, channel, 'released')
end
return removed
