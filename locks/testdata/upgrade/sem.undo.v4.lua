-- name: sem.undo
-- version: 4
-- description: Undo an Acquire call that gave up: refuse its attempt from now on, take it out of the queue, give back permits it may have taken, and hand them to the queued calls that now fit.
-- keys: lock queue index
-- args: owner gone_ttl_ms
-- returns: 1 when the call's record was there (it held permits, or they were handed to it), 0 otherwise
--
-- An Acquire whose outcome its caller does not know (a timeout, a lost
-- reply, a refusal after the fact such as too few replicas) runs this.
-- The call's owner token is its attempt id: g:<owner> in the lock hash
-- records it as given up until gone_ttl_ms from now, and sem.acquire@10
-- takes nothing for it when it arrives later. Its queue entry (w:<owner>
-- and its place in queue) goes, its record p:<owner> goes whatever its
-- state (taken, handed over, revoked), and the permits freed, or the place
-- it held at the head of the queue, go to the queued calls that now fit,
-- as sem.release@9 serves them. The lock hash lives at least gone_ttl_ms;
-- since calls with different TTLs share it, its expiry only moves forward.
--
-- Cost: as sem.release@9 plus TIME, an HSET, a ZREM and an HDEL, the
-- given-up record's ZADD in the index and a sweep of at most 8 given-up
-- records whose time passed (a ZRANGE, an HMGET, an HDEL and a ZREM).

-- A lock's name is at most MaxNameBytes (1024 bytes), its key "{name}"
-- 1026: the client refuses longer names, and so does the script, for
-- callers that are not this library.
if #KEYS[1] > 1026 then
  return redis.error_reply('ERR the lock key is ' .. #KEYS[1] ..
    ' bytes: a lock name is at most 1024 bytes (MaxNameBytes), its key "{name}" 1026')
end

local lock, queue, index = KEYS[1], KEYS[2], KEYS[3]
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
-- The given-up record is filed in the index (band 10^13 + its end), and
-- at most 8 records there whose end passed go.
redis.call('ZADD', index, string.format('%d', 10000000000000 + now + gone_ttl), 'g:' .. owner)
if redis.call('PTTL', index) < gone_ttl and redis.call('HEXISTS', lock, 'l') == 0 then
  redis.call('PEXPIRE', index, gone_ttl)
end
local ended = redis.call('ZRANGE', index, '10000000000000', string.format('%d', 10000000000000 + now),
  'BYSCORE', 'LIMIT', 0, 8)
if #ended > 0 then
  local ends = redis.call('HMGET', lock, unpack(ended))
  local gone = {}
  for i, member in ipairs(ended) do
    local t = tonumber(ends[i])
    if t and t > now then
      redis.call('ZADD', index, string.format('%d', 10000000000000 + t), member)
    else
      gone[#gone + 1] = member
    end
  end
  if #gone > 0 then
    redis.call('HDEL', lock, unpack(gone))
    redis.call('ZREM', index, unpack(gone))
  end
end
local left = redis.call('ZREM', queue, owner)
redis.call('HDEL', lock, 'w:' .. owner)

local got = redis.call('HMGET', lock, mine, 'h', 'q', 'u')
local rec, h = got[1], got[2]
local held = 0
if rec then
  -- The record goes, and its count comes off used when it is counted (h
  -- this semaphore's, the record after the floor); the last counted
  -- record out drops h and u (once h's until_ms passed, used is stale and
  -- the next writer counts again from 0 anyway). The lone record (u names it) has no
  -- member in the index.
  held = 1
  local e, n = string.match(rec, '^(%d+)\t%a\t(%d+)\t')
  local hold_until, fresh, u = string.match(h or '', '^semaphore\t(%d+)\tp\t(%d+)\t(%d+)$')
  local lo, floor = string.match(got[4] or '', '^([^\t]*)\t(%d+)$')
  if lo ~= ARGV[1] then
    redis.call('ZREM', index, mine)
  end
  if hold_until and n and tonumber(e) > (tonumber(floor) or 0) then
    local rest = math.max(0, tonumber(u) - tonumber(n))
    if rest == 0 then
      redis.call('HDEL', lock, mine, 'h', 'u')
      h = nil
    else
      h = string.format('semaphore\t%s\tp\t%s\t%d', hold_until, fresh, rest)
      if lo == ARGV[1] then
        redis.call('HSET', lock, 'h', h, 'u', '\t' .. floor)
      else
        redis.call('HSET', lock, 'h', h)
      end
      redis.call('HDEL', lock, mine)
    end
  else
    redis.call('HDEL', lock, mine) -- not counted, or h is not this semaphore's: leave h
  end
end
if not (got[3] and tonumber(got[3]) > now) then
  if left == 1 and redis.call('EXISTS', queue) == 0 then
    redis.call('HDEL', lock, 'q')
  end
  return held
end

-- ours: h is this semaphore's; another kind of lock that holds the name
-- keeps its queue to itself. A hold whose until_ms passed starts the
-- count again (every record in it ran out): used 0, the floor at now.
local indexed = 9999999999999 -- fresh_until_ms while the index finds every record
local more = redis.call('HMGET', lock, 'f', 'l', 'u')
local last, stored = tonumber(more[1]) or 0, tonumber(more[2])
local ours, hold_until, used, fresh, floor, lone = false, 0, 0, indexed, now, nil
if h then
  local u, e
  hold_until, e, u = string.match(h, '^semaphore\t(%d+)\tp\t(%d+)\t(%d+)$')
  if hold_until then
    ours, hold_until = true, tonumber(hold_until)
    if hold_until > now then
      used, fresh = tonumber(u), tonumber(e)
      local lo, fl = string.match(more[3] or '', '^([^\t]*)\t(%d+)$')
      floor = tonumber(fl) or 0
      if lo and lo ~= '' then
        lone = lo
      end
    else
      hold_until = 0
    end
  elseif (tonumber(string.match(h, '^[^\t]*\t(%d+)')) or now + 1) > now then
    return held
  else
    hold_until = 0
  end
end

local index_until = 0
-- file adds (or moves) a record's member in the index.
local function file(member, expiry)
  redis.call('ZADD', index, expiry, member)
  index_until = math.max(index_until, expiry)
end

-- settle makes used count what the index finds: the one recount after an
-- older version's write or a forced unlock (fresh before indexed), the
-- lone record moved in, and a sweep of at most 8 members whose time
-- passed (sem.acquire@10's).
local function settle()
  if fresh < indexed then
    -- The whole hash, once: every live p: record filed in the index.
    local all = redis.call('HGETALL', lock)
    local dead = {}
    used, lone, fresh = 0, nil, indexed
    for i = 1, #all, 2 do
      local field, value = all[i], all[i + 1]
      local prefix = string.sub(field, 1, 2)
      if prefix == 'p:' then
        local e, n = string.match(value, '^(%d+)\t%a\t(%d+)\t')
        e = tonumber(e)
        if e and e > now then
          used, hold_until = used + tonumber(n), math.max(hold_until, e)
          file(field, e)
        else
          dead[#dead + 1] = field
        end
      elseif (prefix == 'g:' and (tonumber(value) or 0) <= now)
        or (prefix == 'w:' and (tonumber(string.match(value, '^%d+')) or 0) <= now) then
        dead[#dead + 1] = field
      end
    end
    for i = 1, #dead, 1000 do
      redis.call('HDEL', lock, unpack(dead, i, math.min(i + 999, #dead)))
    end
    return
  end
  if lone then
    local e = tonumber(string.match(redis.call('HGET', lock, 'p:' .. lone) or '', '^(%d+)\t'))
    if e then
      file('p:' .. lone, e) -- a sweep reads it when its time passes
    end
    lone = nil
  end
  local due = redis.call('ZRANGE', index, '-inf', now, 'BYSCORE', 'LIMIT', 0, 8)
  if #due == 0 then
    return
  end
  local recs = redis.call('HMGET', lock, unpack(due))
  local gone = {}
  for i, member in ipairs(due) do
    local e, n = string.match(recs[i] or '', '^(%d+)\t%a\t(%d+)\t')
    e = tonumber(e)
    if e and e > now then
      file(member, e)
    else
      if e and e > floor then
        used = math.max(0, used - tonumber(n))
      end
      gone[#gone + 1] = member
    end
  end
  if #gone > 0 then
    redis.call('HDEL', lock, unpack(gone))
    redis.call('ZREM', index, unpack(gone))
  end
end

-- drop_dead_head drops the entries at the head of the queue whose deadline
-- passed, at most 100, with one range read and one removal by rank; it
-- reports how many.
local function drop_dead_head()
  local head = redis.call('ZRANGE', queue, 0, 0)[1]
  if not head then
    return 0
  end
  local entry = redis.call('HGET', lock, 'w:' .. head)
  if entry and (tonumber(string.match(entry, '^(%d+)')) or 0) > now then
    return 0
  end
  local whos = redis.call('ZRANGE', queue, 0, 99)
  local names = {}
  for j, who in ipairs(whos) do
    names[j] = 'w:' .. who
  end
  local entries = redis.call('HMGET', lock, unpack(names))
  local k = 0
  while k < #whos and not (entries[k + 1] and (tonumber(string.match(entries[k + 1], '^(%d+)')) or 0) > now) do
    k = k + 1
  end
  redis.call('HDEL', lock, unpack(names, 1, k))
  redis.call('ZREMRANGEBYRANK', queue, 0, k - 1)
  return k
end

-- Serve the head of the queue: the dead at its head dropped first (a
-- full page of 100 and the rest waits for the next call), then at most 8
-- more entries whose deadline passed dropped along the way.
local fields, granted, settled, i, dropped = {}, false, false, 0, 0
if drop_dead_head() == 100 then
  dropped = 7 -- a full page: one more dead entry and the rest waits for the next call
end
while dropped < 8 do
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
    if n <= its_limit and n > its_limit - used and not settled and hold_until > 0 then
      -- Permits may have come back by expiry: sweep.
      settle()
      settled = true
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
      hold_until = math.max(hold_until, expiry)
      used = used + n
      last = math.max(now_us, last + 1)
      fields[#fields + 1] = 'p:' .. who
      fields[#fields + 1] = string.format('%d\tg\t%d\t', expiry, n) .. tail
      file('p:' .. who, expiry)
      granted = true
      redis.call('ZREM', queue, who)
      redis.call('HDEL', lock, 'w:' .. who)
      redis.call(its_publish, channel, string.format('grant %d ', last) .. who .. ' ' .. who)
    end
  else
    redis.call('ZREM', queue, who)
    redis.call('HDEL', lock, 'w:' .. who)
    dropped = dropped + 1
  end
end

if granted or settled then
  if used > 0 then
    fields[#fields + 1] = 'h'
    fields[#fields + 1] = string.format('semaphore\t%d\tp\t%d\t%d', hold_until, fresh, used)
    fields[#fields + 1] = 'u'
    fields[#fields + 1] = (lone or '') .. string.format('\t%d', floor)
  elseif ours then
    redis.call('HDEL', lock, 'h', 'u')
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
  if index_until > 0 and not stored and redis.call('PTTL', index) < index_until - now then
    redis.call('PEXPIRE', index, index_until - now)
  end
end
if redis.call('EXISTS', queue) == 0 then
  redis.call('HDEL', lock, 'q')
end
return held
