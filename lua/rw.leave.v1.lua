-- name: rw.leave
-- version: 1
-- description: Take a writer that stopped waiting out of a read-write lock's waiting set, so it holds back no readers.
-- keys: waiting
-- args: owner channel
-- returns: 1 when the writer was waiting, 0 when it was not
--
-- Readers held back by this writer are told to retry at once.

local removed = redis.call('ZREM', KEYS[1], ARGV[1])
if removed == 1 then
  redis.call('PUBLISH', ARGV[2], 'released')
end
return removed
