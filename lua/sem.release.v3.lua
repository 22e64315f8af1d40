-- name: sem.release
-- version: 3
-- description: Give back the permits an owner holds and wake the waiters.
-- keys: permits gone
-- args: owner count channel publish attempt gone_ttl_ms
-- returns: the number of the owner's permits that were still held (0 when they had expired)
--
-- Version 2: publish is PUBLISH, or SPUBLISH on a cluster with sharded pub/sub.
--
-- Version 3: an Acquire that gave up on an ambiguous error (a timeout)
-- undoes what its attempt may have taken by calling this script with the
-- attempt's id (the locks package uses the call's owner token): the attempt
-- is recorded in gone first, so that sem.acquire@4 refuses it if it reaches
-- the server later, and the record and the release happen in one script,
-- with no moment between them for the late attempt. An Unlock passes an
-- empty attempt. The record lives gone_ttl_ms; several clients share one
-- gone hash per semaphore, so its expiry only moves forward.

local permits, gone = KEYS[1], KEYS[2]
local owner, count, channel, publish, attempt = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4], ARGV[5]
if publish ~= 'PUBLISH' and publish ~= 'SPUBLISH' then
  return redis.error_reply('ERR publish must be PUBLISH or SPUBLISH')
end

if attempt ~= '' then
  local gone_ttl = tonumber(ARGV[6])
  if not gone_ttl or gone_ttl < 1 then
    return redis.error_reply('ERR gone_ttl_ms must be a positive number of milliseconds')
  end
  redis.call('HSET', gone, attempt, 1)
  if redis.call('PTTL', gone) < gone_ttl then
    redis.call('PEXPIRE', gone, gone_ttl)
  end
end

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

local held = 0
for i = 1, count do
  local member = owner .. ':' .. i
  local deadline = redis.call('ZSCORE', permits, member)
  if deadline and tonumber(deadline) > now then
    held = held + 1
  end
  redis.call('ZREM', permits, member)
end
redis.call(publish, channel, 'released')
return held
