-- name: mutex.extend
-- version: 6
-- description: Reset a single holder's lease (a Mutex, or an RWMutex writer) to a new length, when the caller's own hold is still there.
-- keys: lock queue
-- args: owner ttl_ms lease_attempt
-- returns: 1 when extended, 0 when another owner (or another call of this owner, or readers or permits) holds it, -1 when no one does (the lease expired), -2 when the hold was revoked (a forced unlock's grace period)
--
-- The hold is h of the lock hash (mutex.acquire's layout), of kind mutex
-- or rwmutex: kind \t until_ms \t state \t count \t client \t attempt \t
-- owner \t meta. lease_attempt is the attempt that took the hold: calls
-- that share an owner token are told apart, so a call whose lease ran out
-- never renews the hold another call of the owner took since. An empty
-- lease_attempt (a reentrant owner, whose calls are one holder) extends any
-- hold of the owner. Attempts compare by their ids, the part before any
-- "/" (a Mutex's hold records the bare id from mutex.acquire@14 on, the
-- attempt with its mode before). A granted hold (g) that its call extends is held (h)
-- from then on. A revoked hold (x) is not extended: the lease ends.
--
-- While q says someone may wait, the queue (mutex.acquire's) lives at least
-- as long as the hash: it is how the scripts find the entries of waiters
-- that died, and a hold extended past it would leave them unfound.
--
-- Cost: one HMGET, TIME, one HSET and one PEXPIRE (two when the hash had a
-- longer TTL), and one PEXPIRE of the queue when q is there.

local lock = KEYS[1]
local owner, lease_attempt = ARGV[1], ARGV[3]
local ttl = tonumber(ARGV[2])
if not ttl or ttl < 1 or ttl > 604800000 or ttl % 1 ~= 0 then
  return redis.error_reply('ERR ttl_ms must be a whole number of milliseconds from 1 to 604800000 (MaxTTL)')
end

local v = redis.call('HMGET', lock, 'h', 'q')
local h = v[1]
if not h then
  return -1
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local kind, ends, state, rest, held_attempt, holder =
  string.match(h, '^([^\t]*)\t(%d+)\t(%a)\t(%d+\t[^\t]*\t([^/\t]*)[^\t]*\t([^\t]*)\t.*)$')
if not kind then
  kind, ends = string.match(h, '^([^\t]*)\t(%d+)')
end
if tonumber(ends) <= now then
  return -1
end
if (kind ~= 'mutex' and kind ~= 'rwmutex') or not holder or holder ~= owner then
  return 0
end
if lease_attempt ~= '' and held_attempt ~= string.match(lease_attempt, '^[^/]*') then
  return 0
end
if state == 'x' then
  return -2
end
if state ~= 'h' and state ~= 'g' then
  return 0
end
redis.call('HSET', lock, 'h', kind .. '\t' .. (now + ttl) .. '\th\t' .. rest)
if redis.call('PEXPIRE', lock, ttl, 'GT') == 0 then
  redis.call('PEXPIRE', lock, ttl, 'NX')
end
if v[2] then
  redis.call('PEXPIRE', KEYS[2], ttl, 'GT')
end
return 1
