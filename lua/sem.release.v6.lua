-- name: sem.release
-- version: 6
-- description: Give back the permits an Acquire call holds (held, handed over or revoked) and hand the freed permits to the queued calls that now fit.
-- keys: lock queue waiters
-- args: owner notify
-- returns: 1 when the call's permits were still live (their expiry not passed), 0 when they had expired or were not there
--
-- The layout is sem.acquire@7's: the call's record p:<owner> in the lock
-- hash carries its count, and h caches the sum of the counts of the
-- records present (used) and a time before which none expires. The
-- release drops the record whatever its state (h, g, or x: the holder's
-- confirmation that it stopped after a revocation) and takes its count
-- off used; the last record out drops h. f (the last fencing token) stays
-- until the hash expires, as long as the released lease would have run.
--
-- notify is "publish grant_prefix", read only when q says a waiter may be
-- queued: then the live waiters at the head of the queue that now fit get
-- their permits here (a g record of min(their TTL, their waiter TTL), a
-- fencing token, and "grant <token> <owner> <owner>" on grant_prefix ..
-- their client), in order, up to the first that does not fit; a waiter
-- that asks for more than its limit is woken ("wake <owner>") to give up;
-- one whose deadline passed is dropped; q goes when the queue is empty.
--
-- Cost: with no queue, one HMGET, TIME and one HDEL (or HSET and HDEL when
-- other holders remain), whatever the count. With a queue, proportional to
-- the waiters served or dropped, plus a recount of the hash's records
-- (proportional to its fields) when the cached count may be stale.

local lock, queue, waiters = KEYS[1], KEYS[2], KEYS[3]
local owner = ARGV[1]
local mine = 'p:' .. owner

local got = redis.call('HMGET', lock, 'h', mine, 'q')
local h, rec = got[1], got[2]
local time = redis.call('TIME')
local now_us = time[1] * 1000000 + time[2]
local now = math.floor(now_us / 1000)

-- ours: h is this semaphore's; other: another kind of lock holds the name.
local ours, other, hold_until, used, fresh = false, false, 0, 0, nil
if h then
  local u, e
  hold_until, u, e = string.match(h, '^semaphore\t(%d+)\tp\t(%d+)\t(%d+)$')
  if hold_until then
    ours, hold_until, used, fresh = true, tonumber(hold_until), tonumber(u), tonumber(e)
  else
    other = (tonumber(string.match(h, '^[^\t]*\t(%d+)')) or now + 1) > now
    hold_until = 0
  end
end

local held = 0
if rec then
  local expiry, n = string.match(rec, '^(%d+)\t%a\t(%d+)\t')
  if tonumber(expiry) and tonumber(expiry) > now then
    held = 1
  end
  used = math.max(0, used - (tonumber(n) or 0))
  if not ours or used > 0 then
    redis.call('HDEL', lock, mine)
    if ours then
      redis.call('HSET', lock, 'h', string.format('semaphore\t%d\tp\t%d\t%d', hold_until, used, fresh))
    end
  else
    redis.call('HDEL', lock, mine, 'h')
    ours = false
  end
end

if not (got[3] and tonumber(got[3]) > now) then
  return held
end
if other then
  return held -- another kind of lock holds the name: its queue is not ours to serve
end

-- A waiter may be queued: serve the head of the queue.
local publish, grant_prefix = string.match(ARGV[2], '^(%S+) (.*)$')
if publish ~= 'PUBLISH' and publish ~= 'SPUBLISH' then
  return redis.error_reply('ERR publish must be PUBLISH or SPUBLISH')
end
local more = redis.call('HMGET', lock, 'f', 'l')
local last, stored = tonumber(more[1]) or 0, tonumber(more[2])

-- recount sums the p: records that are live now and drops the others (and
-- the given-up attempts whose time passed): proportional to the fields of
-- the hash.
local function recount()
  local all = redis.call('HGETALL', lock)
  local dead = {}
  used, fresh = 0, nil
  for i = 1, #all, 2 do
    local field, value = all[i], all[i + 1]
    local prefix = string.sub(field, 1, 2)
    if prefix == 'p:' then
      local e, n = string.match(value, '^(%d+)\t%a\t(%d+)\t')
      e = tonumber(e)
      if e and e > now then
        used = used + tonumber(n)
        fresh = math.min(fresh or e, e)
      else
        dead[#dead + 1] = field
      end
    elseif prefix == 'g:' and (tonumber(value) or 0) <= now then
      dead[#dead + 1] = field
    end
  end
  for i = 1, #dead, 1000 do
    redis.call('HDEL', lock, unpack(dead, i, math.min(i + 999, #dead)))
  end
end

local fields, granted, recounted, i = {}, false, false, 0
while true do
  local who = redis.call('ZRANGE', queue, i, i)[1]
  if not who then
    break
  end
  local entry = redis.call('HGET', waiters, who)
  local deadline, its_waiter_ttl, n, its_ttl, its_limit, tail
  if entry then
    deadline, its_waiter_ttl, n, its_ttl, its_limit, tail = string.match(entry, '^(%d+) (%d+) (%d+) (%d+) (%d+)\t(.*)$')
  end
  if deadline and tonumber(deadline) > now then
    n, its_limit = tonumber(n), stored or tonumber(its_limit)
    if n <= its_limit and n > its_limit - used and not recounted and fresh and now >= fresh then
      -- Permits may have come back by expiry: count again.
      recount()
      recounted = true
    end
    local client = string.match(tail, '^([^\t]*)')
    if n > its_limit then
      -- It can never be served: woken, it gives up.
      redis.call(publish, grant_prefix .. client, 'wake ' .. who)
      i = i + 1
    elseif n > its_limit - used then
      break
    else
      local expiry = now + math.min(tonumber(its_ttl), tonumber(its_waiter_ttl))
      hold_until, fresh = math.max(hold_until, expiry), math.min(fresh or expiry, expiry)
      used = used + n
      last = math.max(now_us, last + 1)
      fields[#fields + 1] = 'p:' .. who
      fields[#fields + 1] = string.format('%d\tg\t%d\t', expiry, n) .. tail
      granted = true
      redis.call('ZREM', queue, who)
      redis.call('HDEL', waiters, who)
      redis.call(publish, grant_prefix .. client, string.format('grant %d ', last) .. who .. ' ' .. who)
    end
  else
    redis.call('ZREM', queue, who)
    redis.call('HDEL', waiters, who)
  end
end

if granted or recounted then
  if used > 0 then
    fields[#fields + 1] = 'h'
    fields[#fields + 1] = string.format('semaphore\t%d\tp\t%d\t%d', hold_until, used, fresh)
  elseif ours then
    redis.call('HDEL', lock, 'h')
  end
  if granted then
    fields[#fields + 1] = 'f'
    fields[#fields + 1] = string.format('%d', last)
  end
  if #fields > 0 then
    redis.call('HSET', lock, unpack(fields))
  end
  if not stored and redis.call('PTTL', lock) < hold_until - now then
    redis.call('PEXPIRE', lock, hold_until - now)
  end
end
if redis.call('EXISTS', queue) == 0 then
  redis.call('HDEL', lock, 'q')
end
return held
