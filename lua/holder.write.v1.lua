-- name: holder.write
-- version: 1
-- description: Record who a locks Client is (its holder metadata: host, pid, label) under the Client's holder key, for Inspect to show beside the holds that name the Client's id.
-- keys: holder
-- args: record ttl_ms
-- returns: 1
--
-- holder is "<key prefix>{redlua-holders}:<client id>" (docs/layout.md): one
-- key per Client, all in the slot of {redlua-holders}, written when the
-- Client first acquires and again when it is older than half ttl_ms. The
-- holds themselves carry "~" for this record instead of the metadata, so
-- that their values stay under 64 bytes (a listpack). record is what
-- Inspect reads back (JSON: host, pid, label), at most 8192 bytes; the key
-- expires after ttl_ms (1 to 604800000). Cost: one SET.

local record, ttl = ARGV[1], tonumber(ARGV[2])
if #record > 8192 then
  return redis.error_reply('ERR record is ' .. #record .. ' bytes: at most 8192')
end
if not ttl or ttl < 1 or ttl > 604800000 or ttl % 1 ~= 0 then
  return redis.error_reply('ERR ttl_ms must be a whole number from 1 to 604800000')
end
redis.call('SET', KEYS[1], record, 'PX', ttl)
return 1
