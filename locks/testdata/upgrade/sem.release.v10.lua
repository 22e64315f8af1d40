-- name: sem.release
-- version: 10
-- description: Give back the permits an Acquire call holds (held, handed over or revoked) and hand the freed permits to the queued calls that now fit.
-- keys: lock queue index
-- args: owner
-- returns: 1 when the call's record was there (whether its time had passed is the lease's to tell, by its own deadline), 0 when it was not
--
-- The layout is sem.acquire@10's (docs/layout.md): the call's record
-- p:<owner> in the lock hash carries its count, h keeps the sum of the
-- counted records' counts (used, its last field), and the index holds
-- every record but the lone one u names. The release drops the record
-- and its index member whatever its state (h, g, or x: the holder's
-- confirmation that it stopped after a revocation) and takes its count
-- off used when it counts (after u's floor); the last record out drops h
-- and u. f (the last fencing
-- token) stays until the hash expires, at least as long as the released
-- lease would have run. The reply does not say whether the record's expiry
-- had passed: the client's lease ended by then by its own deadline, which
-- comes before the record's.
--
-- When q says a waiter may be queued, the live waiters at the head of the
-- queue that now fit get their permits here (a g record of min(their TTL,
-- their waiter TTL), a fencing token, and "grant <token> <owner> <owner>"
-- on their client's channel <lock>:grant:<client>, published as their
-- entry says), in order, up to the first that does not fit; a waiter that
-- asks for more than its limit is woken ("wake <owner>") to give up; one
-- whose deadline passed is dropped; q goes when the queue is empty.
--
-- Cost: with no waiter, one HMGET, one HDEL and a ZREM of the record's
-- index member (none for the lone holder), and an HSET when other holders
-- remain, whatever the count; the lone holder's release parses its record
-- with one pattern and compares strings, no number parsed. With a queue,
-- TIME and work proportional to the waiters served or
-- woken, plus at most 100 dead entries at the queue's head (one range
-- read and one removal by rank) and 8 more along the way, plus, when the
-- head does not fit, a sweep of the index (at most 8 records whose time
-- passed; the whole hash only once after an older version's write or a
-- forced unlock).

local lock, queue, index = KEYS[1], KEYS[2], KEYS[3]
local mine = 'p:' .. ARGV[1]

local got = redis.call('HMGET', lock, mine, 'h', 'q', 'u')
local rec, h = got[1], got[2]
local lone_u = got[4]
local lone_floor = rec and h and lone_u and not got[3] and string.sub(lone_u, #ARGV[1] + 2)
if lone_floor and lone_u == ARGV[1] .. '\t' .. lone_floor then
  -- The lone holder alone, no one queued: h is as sem.take wrote it (its
  -- until_ms the record's expiry, used the record's count) and the record
  -- counts (its expiry after u's floor, compared as equal-length decimal
  -- strings): the record, h and u go, as below, with no number parsed.
  local e, n = string.match(rec, '^(%d+)\t%a\t(%d+)\t')
  if e and h == 'semaphore\t' .. e .. '\tp\t9999999999999\t' .. n and #e == #lone_floor and e > lone_floor then
    redis.call('HDEL', lock, mine, 'h', 'u')
    return 1
  end
end
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
if not got[3] then
  return held
end

-- A waiter may be queued: serve the head of the queue.
local time = redis.call('TIME')
local now_us = time[1] * 1000000 + time[2]
local now = math.floor(now_us / 1000)
if tonumber(got[3]) <= now then
  if redis.call('EXISTS', queue) == 0 then
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
