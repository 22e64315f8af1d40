-- name: gone.record
-- version: 1
-- description: Record that an acquiring call gave up on an ambiguous error (a timeout), so that its attempt takes nothing if it reaches the server later.
-- keys: gone
-- args: attempt gone_ttl_ms
-- returns: 1
--
-- A timed-out acquire script may still sit in a frozen server's buffers, or
-- on a connection the client has given up on, and run after the caller
-- undid what it might have taken. The acquire scripts that take a gone key
-- (mutex.acquire@2 and later, rw.rlock@3, rw.lock@3, sem.acquire@4,
-- multi.acquire@3) refuse an attempt recorded here. The caller records the
-- attempt first and releases afterwards: an attempt that ran before the
-- record is released, one that runs after it takes nothing.
--
-- The record outlives any such attempt: gone_ttl_ms is twice the longer of
-- the lease and the waiter lease. Several clients share one gone hash per
-- lock name, so its expiry only ever moves forward.

local gone = KEYS[1]
local attempt, gone_ttl = ARGV[1], tonumber(ARGV[2])

if not gone_ttl or gone_ttl < 1 then
  return redis.error_reply('ERR gone_ttl_ms must be a positive number of milliseconds')
end
redis.call('HSET', gone, attempt, 1)
if redis.call('PTTL', gone) < gone_ttl then
  redis.call('PEXPIRE', gone, gone_ttl)
end
return 1
