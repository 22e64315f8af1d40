-- name: rw.leave
-- version: 2
-- description: Take a writer that stopped waiting out of a read-write lock's waiting set, so it holds back no readers.
-- keys: waiting
-- args: owner channel publish
-- returns: 1 when the writer was waiting, 0 when it was not
--
-- Readers held back by this writer are told to retry at once.
--
-- Version 2: publish is PUBLISH, or SPUBLISH on a cluster with sharded pub/sub.

local publish = ARGV[3]
if publish ~= 'PUBLISH' and publish ~= 'SPUBLISH' then
  return redis.error_reply('ERR publish must be PUBLISH or SPUBLISH')
end

local removed = redis.call('ZREM', KEYS[1], ARGV[1])
if removed == 1 then
  redis.call(publish, ARGV[2], 'released')
end
return removed
