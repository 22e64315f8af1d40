#!lua flags=no-writes
-- name: holder.read
-- version: 1
-- description: Read the holder records of locks Clients (host, pid, label), for Inspect to show who holds a lock.
-- keys: holders...
-- args:
-- returns: {record or nil, ...}, in KEYS order
--
-- Each key is a holder key written by holder.write ("<key prefix>
-- {redlua-holders}:<client id>"): all share the slot of {redlua-holders},
-- so one call reads up to 1000 of them. A missing key, or one of another
-- type, reads as nil: the holder is unknown. Read-only (replicas may
-- answer). Cost: one MGET of the keys.

if #KEYS > 1000 then
  return redis.error_reply('ERR ' .. #KEYS .. ' holder keys: at most 1000 a call')
end
return redis.call('MGET', unpack(KEYS))
