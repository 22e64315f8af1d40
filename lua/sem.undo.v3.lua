-- name: sem.undo
-- version: 3
-- description: Undo an Acquire call that gave up: refuse its attempt from now on, take it out of the queue, give back permits it may have taken, and hand them to the queued calls that now fit.
-- keys: lock queue
-- args: owner gone_ttl_ms
-- returns: 1 when the call's record was there (it held permits, or they were handed to it), 0 otherwise
--
-- An Acquire whose outcome its caller does not know (a timeout, a lost
-- reply, a refusal after the fact such as too few replicas) runs this.
-- The call's owner token is its attempt id: g:<owner> in the lock hash
-- records it as given up until gone_ttl_ms from now, and sem.acquire@9
-- takes nothing for it when it arrives later. Its queue entry (w:<owner>
-- and its place in queue) goes, its record p:<owner> goes whatever its
-- state (taken, handed over, revoked), and the permits freed, or the place
-- it held at the head of the queue, go to the queued calls that now fit,
-- as sem.release@8 serves them. The lock hash lives at least gone_ttl_ms;
-- since calls with different TTLs share it, its expiry only moves forward.
--
-- Cost: as sem.release@8 plus TIME, an HSET, a ZREM and an HDEL;
-- proportional to the waiters served or dropped, and to the hash's fields
-- when the cached count of permits in use may be stale.

-- A lock's name is at most MaxNameBytes (1024 bytes), its key "{name}"
-- 1026: the client refuses longer names, and so does the script, for
-- callers that are not this library.
if #KEYS[1] > 1026 then
  return redis.error_reply('ERR the lock key is ' .. #KEYS[1] ..
    ' bytes: a lock name is at most 1024 bytes (MaxNameBytes), its key "{name}" 1026')
end

local lock, queue = KEYS[1], KEYS[2]
local owner, gone_ttl = ARGV[1], tonumber(ARGV[2])
if not gone_ttl or gone_ttl < 1 or gone_ttl > 1209600000 or gone_ttl % 1 ~= 0 then
  return redis.error_reply('ERR gone_ttl_ms must be an integer in 1..1209600000')
end
local mine = 'p:' .. owner
local time = redis.call('TIME')
local now_us = time[1] * 1000000 + time[2]
local now = math.floor(now_us / 1000)

redis.call('HSET', lock, 'g:' .. owner, string.format('%d', now + gone_ttl))
if redis.call('PTTL', lock) < gone_ttl and redis.call('HEXISTS', lock, 'l') == 0 then
  redis.call('PEXPIRE', lock, gone_ttl)
end
local left = redis.call('ZREM', queue, owner)
redis.call('HDEL', lock, 'w:' .. owner)

local got = redis.call('HMGET', lock, mine, 'h', 'q')
local rec, h = got[1], got[2]
local held = 0
if rec then
  held = 1
  local n = string.match(rec, '^%d+\t%a\t(%d+)\t')
  local ours = h and n and string.sub(h, 1, 10) == 'semaphore\t'
  if ours and string.sub(h, -#n - 1) == '\t' .. n then
    -- The last holder out: used, h's last field, is this record's count.
    redis.call('HDEL', lock, mine, 'h')
    h = nil
  elseif ours then
    local hold_until, fresh, u = string.match(h, '^semaphore\t(%d+)\tp\t(%d+)\t(%d+)$')
    redis.call('HDEL', lock, mine)
    if hold_until then
      h = string.format('semaphore\t%s\tp\t%s\t%d', hold_until, fresh, math.max(0, tonumber(u) - tonumber(n)))
      redis.call('HSET', lock, 'h', h)
    end
  else
    redis.call('HDEL', lock, mine) -- h is not this semaphore's: leave it
  end
end
if not (got[3] and tonumber(got[3]) > now) then
  if left == 1 and redis.call('EXISTS', queue) == 0 then
    redis.call('HDEL', lock, 'q')
  end
  return held
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
    return held
  else
    hold_until = 0
  end
end
local more = redis.call('HMGET', lock, 'f', 'l')
local last, stored = tonumber(more[1]) or 0, tonumber(more[2])

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
  if not stored and redis.call('PTTL', lock) < hold_until - now then
    redis.call('PEXPIRE', lock, hold_until - now)
  end
end
if redis.call('EXISTS', queue) == 0 then
  redis.call('HDEL', lock, 'q')
end
return held
