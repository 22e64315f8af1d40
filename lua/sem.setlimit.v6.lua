-- name: sem.setlimit
-- version: 6
-- description: Store a semaphore's permit count for every client and hand the permits a larger count frees to the queued calls that now fit.
-- keys: lock queue
-- args: limit
-- returns: the previous stored count, or false when none was stored
--
-- The count is field l of the lock hash (sem.acquire@9's layout); once
-- stored it overrides every client's default, so the hash no longer
-- expires (PERSIST). Holders above a lowered count keep their permits until
-- they release them. When q says a waiter may be queued, the live waiters
-- at the head that now fit get their permits, as sem.release@8 serves
-- them, and those that ask for more than the new count are woken ("wake
-- <owner>") to give up.
--
-- Cost: one HMGET, HSET and PERSIST; with a queue, proportional to the
-- waiters served or dropped, and to the hash's fields when the cached
-- count of permits in use may be stale.

-- A lock's name is at most MaxNameBytes (1024 bytes), its key "{name}"
-- 1026: the client refuses longer names, and so does the script, for
-- callers that are not this library.
if #KEYS[1] > 1026 then
  return redis.error_reply('ERR the lock key is ' .. #KEYS[1] ..
    ' bytes: a lock name is at most 1024 bytes (MaxNameBytes), its key "{name}" 1026')
end

local lock, queue = KEYS[1], KEYS[2]
local limit = tonumber(ARGV[1])
if not limit or limit < 1 or limit > 9007199254740992 or limit % 1 ~= 0 then
  return redis.error_reply('ERR limit must be an integer in 1..9007199254740992')
end

local got = redis.call('HMGET', lock, 'l', 'h', 'q', 'f')
redis.call('HSET', lock, 'l', string.format('%d', limit))
redis.call('PERSIST', lock)
local previous, h = got[1], got[2]
local time = redis.call('TIME')
local now_us = time[1] * 1000000 + time[2]
local now = math.floor(now_us / 1000)
if not (got[3] and tonumber(got[3]) > now) then
  return previous
end

-- ours: h is this semaphore's; another kind of lock that holds the name
-- keeps its queue to itself.
local ours, hold_until, used, fresh = false, 0, 0, nil
if h then
  local u, e
  hold_until, e, u = string.match(h, '^semaphore\t(%d+)\tp\t(%d+)\t(%d+)$')
  if hold_until then
    ours, hold_until, used, fresh = true, tonumber(hold_until), tonumber(u), tonumber(e)
  elseif (tonumber(string.match(h, '^[^\t]*\t(%d+)')) or now + 1) > now then
    return previous
  else
    hold_until = 0
  end
end
local last, stored = tonumber(got[4]) or 0, limit

-- recount sums the p: records that are live now and drops the others (and
-- the given-up attempts and waiter entries whose time passed):
-- proportional to the fields of the hash.
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
    elseif (prefix == 'g:' and (tonumber(value) or 0) <= now)
      or (prefix == 'w:' and (tonumber(string.match(value, '^%d+')) or 0) <= now) then
      dead[#dead + 1] = field -- a given-up attempt or a waiter whose time passed
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
  local entry = redis.call('HGET', lock, 'w:' .. who)
  local deadline, its_waiter_ttl, n, its_ttl, its_limit, its_publish, tail
  if entry then
    deadline, its_waiter_ttl, n, its_ttl, its_limit, its_publish, tail =
      string.match(entry, '^(%d+) (%d+) (%d+) (%d+) (%d+) (%u+)\t(.*)$')
  end
  if deadline and tonumber(deadline) > now then
    n, its_limit = tonumber(n), stored or tonumber(its_limit)
    if n <= its_limit and n > its_limit - used and not recounted and fresh and now >= fresh then
      -- Permits may have come back by expiry: count again.
      recount()
      recounted = true
    end
    local channel = lock .. ':grant:' .. string.match(tail, '^([^\t]*)')
    if n > its_limit then
      -- It can never be served: woken, it gives up.
      redis.call(its_publish, channel, 'wake ' .. who)
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
      redis.call('HDEL', lock, 'w:' .. who)
      redis.call(its_publish, channel, string.format('grant %d ', last) .. who .. ' ' .. who)
    end
  else
    redis.call('ZREM', queue, who)
    redis.call('HDEL', lock, 'w:' .. who)
  end
end

if granted or recounted then
  if used > 0 then
    fields[#fields + 1] = 'h'
    fields[#fields + 1] = string.format('semaphore\t%d\tp\t%d\t%d', hold_until, fresh, used)
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
end
if redis.call('EXISTS', queue) == 0 then
  redis.call('HDEL', lock, 'q')
end
return previous
