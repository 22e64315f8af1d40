-- name: sem.acquire
-- version: 10
-- description: Take count permits of a semaphore when they are free and no earlier live waiter is owed them, or claim the permits a release handed to this call; otherwise queue the call, first come first served.
-- keys: lock queue index
-- args: owner count ttl_ms default_limit holder wait
-- returns: fence_token (an integer) when the caller holds the permits; {0, wait_hint_ms, limit, position, server_time_us} when it must wait (position 0: not queued); {0, 0, 0} when the caller gave up on this attempt; {-1, kind} when another kind of lock holds the name
--
-- The semaphore lives in the lock hash (docs/layout.md), one record per holder:
--   h         = semaphore \t until_ms \t p \t fresh_until_ms \t used
--   p:<owner> = expiry_ms \t state \t count \t client \t attempt \t meta
--   u         = <lone owner> \t floor_ms
-- used is the sum of the counts of the counted p: records present in the
-- hash: those whose expiry is after floor_ms (u's second field; 0 without
-- u). Records at or before the floor were left by an earlier hold of the
-- name (every record then had run out) and count for nothing. index (a
-- sorted set) holds every counted record but the lone one u names, as
-- member p:<owner> scored by its expiry, and sem.undo's given-up records
-- g:<attempt> scored 10^13 + their end. A sweep reads at most 8 members
-- whose score passed, takes the counts of the records that ran out off
-- used, deletes them and files again those whose expiry moved: used never
-- counts fewer than the live permits. fresh_until_ms is 9999999999999
-- while the index finds every record; an older version's record (it
-- lowers fresh_until_ms to its expiry) or a forced unlock makes it
-- earlier, and the first call off the fast paths recounts the hash once
-- (the only whole-hash read, and only after an older version or a forced
-- unlock wrote) and indexes what it finds. Once h's until_ms passed every
-- record ran out: the count starts again at 0 with the floor at now. The
-- last one out drops h and u. state is h (held), g (handed over by a
-- release, not claimed yet) or x (revoked). f
-- is the last fencing token, q the time until which a waiter may be
-- queued, l the stored limit (SetPermits; default_limit until one is
-- stored), g:<attempt> a given-up attempt. An Acquire call's owner token
-- is also its attempt id.
--
-- holder is the record's tail, "client \t owner \t meta"; wait is
-- "waiter_ttl_ms publish" (PUBLISH, or SPUBLISH on a cluster), read only
-- off the fast path (waiter_ttl_ms 0: do not queue, TryAcquire). A queued
-- call hears its grant on the channel <lock>:grant:<client>.
--
-- Cost: the fast path (no holder and no waiter, or other holders, a count
-- the index keeps and no waiter, and the permits free) is one HMGET, TIME,
-- one HSET, at most a PTTL and, about once per TTL, a PEXPIRE; with other
-- holders also a ZADD and a sweep, whatever count is. Otherwise the script
-- walks the head of the queue (the waiters it serves or skips, and at most
-- 100 whose deadline passed) and sweeps the index (at most 8 records):
-- never the whole hash, but for the one recount after an older version's
-- write or a forced unlock.
--
-- The queue is queue (a sorted set of owners by arrival) and the entries
-- w:<owner> = "deadline_ms waiter_ttl_ms count ttl_ms default_limit publish
-- \t holder" in the lock hash. Before a caller takes permits, the live waiters at the head
-- that fit are served (a release would have served them already unless
-- permits came back by expiry): each gets a g record of min(its TTL, its
-- waiter TTL), a fencing token, and "grant <token> <owner> <owner>" on its
-- client's channel. The caller itself, reached in the queue, takes its
-- permits for a full lease, and the serving goes on behind it. A waiter
-- that asks for more than its limit is woken ("wake <owner>") to give up
-- and holds no one back; a waiter whose deadline passed is dropped. A
-- caller takes its permits only when no live waiter that fits its limit is
-- left ahead of it. The reply on a wait ends with the server's time, so
-- that the waiter tells a grant made after it (a larger token) from an
-- older one.

-- A lock's name is at most MaxNameBytes (1024 bytes), its key "{name}"
-- 1026: the client refuses longer names, and so does the script, for
-- callers that are not this library.
if #KEYS[1] > 1026 then
  return redis.error_reply('ERR the lock key is ' .. #KEYS[1] ..
    ' bytes: a lock name is at most 1024 bytes (MaxNameBytes), its key "{name}" 1026')
end

local lock, queue, index = KEYS[1], KEYS[2], KEYS[3]
local owner, count, ttl = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local holder = ARGV[5]
local max_count = 9007199254740992 -- 2^53: every count and sum stays an exact integer
if not count or count < 1 or count > max_count or count % 1 ~= 0 then
  return redis.error_reply('ERR count must be an integer in 1..9007199254740992')
end
if not ttl or ttl < 1 or ttl > 604800000 or ttl % 1 ~= 0 then
  return redis.error_reply('ERR ttl_ms must be an integer in 1..604800000')
end

local mine = 'p:' .. owner
local got = redis.call('HMGET', lock, 'h', 'f', 'q', 'l', mine, 'g:' .. owner, 'u')
local h, rec, stored = got[1], got[5], got[4]
local time = redis.call('TIME')
local now_us = time[1] * 1000000 + time[2]
local now = (now_us - now_us % 1000) / 1000
if got[6] and tonumber(got[6]) > now then
  return {0, 0, 0} -- the caller gave up on this attempt and undid it
end
local limit = tonumber(stored)
if not limit then
  limit = tonumber(ARGV[4])
  if not limit or limit < 1 or limit > max_count or limit % 1 ~= 0 then
    return redis.error_reply('ERR default_limit must be an integer in 1..9007199254740992')
  end
end
local indexed = 9999999999999 -- fresh_until_ms while the index finds every record

if not h and not got[3] and not rec and count <= limit then
  -- The fast path: no holder, no waiter. The token is the server's time
  -- unless the last one is as large (compared as decimal strings). The
  -- lone holder stays out of the index (u names it).
  local token, token_s, last_s = now_us, string.format('%d', now_us), got[2]
  if last_s and (#last_s > #token_s or (#last_s == #token_s and last_s >= token_s)) then
    token = tonumber(last_s) + 1
    token_s = string.format('%d', token)
  end
  local e, c = string.format('%d', now + ttl), '1'
  if count ~= 1 then
    c = string.format('%d', count)
  end
  redis.call('HSET', lock, 'h', 'semaphore\t' .. e .. '\tp\t9999999999999\t' .. c, 'f', token_s,
    mine, e .. '\th\t' .. c .. '\t' .. holder, 'u', owner .. string.format('\t%d', now))
  if not stored and redis.call('PTTL', lock) < ttl then
    redis.call('PEXPIRE', lock, ttl + ttl) -- a stored limit keeps the hash for good
  end
  return token
end

-- hold_until, used, fresh and floor as h and u say; lone is the owner u
-- names. A hold whose until_ms passed, or none, starts the count again.
local hold_until, used, fresh, floor, lone = 0, 0, indexed, now, nil
if h then
  local kind, other_until, rest = string.match(h, '^([^\t]*)\t(%d+)(.*)$')
  if kind ~= 'semaphore' then
    if not other_until or tonumber(other_until) > now then
      return {-1, kind or h}
    end
  elseif tonumber(other_until) > now then
    local e, u = string.match(rest, '^\tp\t(%d+)\t(%d+)$')
    hold_until, fresh, used = tonumber(other_until), tonumber(e) or 0, tonumber(u) or 0
    local lo, fl = string.match(got[7] or '', '^([^\t]*)\t(%d+)$')
    floor = tonumber(fl) or 0
    if lo and lo ~= '' then
      lone = lo
    end
  end
end
local queued = got[3] and tonumber(got[3]) > now
local last = tonumber(got[2]) or 0

local changed, queue_changed, drew, index_until = false, false, false, 0
local fields = {}
local function put(field, value)
  fields[#fields + 1] = field
  fields[#fields + 1] = value
  changed = true
end
local function hold(expiry)
  hold_until = math.max(hold_until, expiry)
end
local function draw_token()
  last, drew = math.max(now_us, last + 1), true
  return last
end
-- file adds (or moves) a record's member in the index.
local function file(member, expiry)
  redis.call('ZADD', index, expiry, member)
  index_until = math.max(index_until, expiry)
end

-- settle makes used count what the index finds: the one recount after an
-- older version's write (fresh before indexed), the lone record moved in,
-- and a sweep of at most 8 members whose time passed.
local function settle()
  changed = true
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
    local r = redis.call('HGET', lock, 'p:' .. lone)
    local e = tonumber(string.match(r or '', '^(%d+)\t'))
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

if not rec and not queued and fresh == indexed and count <= limit - used then
  -- Other holders (or a hold that ended), no waiter: take the permits.
  local token = draw_token()
  local expiry = now + ttl
  if hold_until == 0 then
    lone = owner -- the count starts again: this record is the lone one
  else
    -- It joins the indexed records (the lone one moves in), and a sweep
    -- keeps the index about as long as the live.
    settle()
    file(mine, expiry)
  end
  hold(expiry)
  used = used + count
  redis.call('HSET', lock,
    'h', string.format('semaphore\t%d\tp\t%d\t%d', hold_until, fresh, used),
    'f', string.format('%d', token), mine, string.format('%d\th\t%d\t', expiry, count) .. holder,
    'u', (lone or '') .. string.format('\t%d', floor))
  if not stored and redis.call('PTTL', lock) < hold_until - now then
    redis.call('PEXPIRE', lock, hold_until - now + ttl)
  end
  if index_until > 0 and not stored and redis.call('PTTL', index) < hold_until - now then
    redis.call('PEXPIRE', index, hold_until - now + ttl)
  end
  return token
end

local waiter_ttl, publish = string.match(ARGV[6], '^(%d+) (%u+)$')
waiter_ttl = tonumber(waiter_ttl)
if not waiter_ttl or waiter_ttl > 86400000 then
  return redis.error_reply('ERR waiter_ttl_ms must be an integer in 0..86400000')
end
if publish ~= 'PUBLISH' and publish ~= 'SPUBLISH' then
  return redis.error_reply('ERR publish must be PUBLISH or SPUBLISH')
end

if hold_until > 0 then
  settle()
end

if rec then
  local expiry, state, n = string.match(rec, '^(%d+)\t(%a)\t(%d+)\t')
  expiry = tonumber(expiry)
  if expiry and expiry > now and state ~= 'x' and hold_until > 0 then
    -- Handed to this call by a release, or taken by an earlier attempt of
    -- it whose reply was lost: claim it for a full lease, with a new token.
    local renewed = now + ttl
    hold(renewed)
    local token = draw_token()
    file(mine, renewed)
    redis.call('HSET', lock, 'h', string.format('semaphore\t%d\tp\t%d\t%d', hold_until, fresh, used),
      'f', string.format('%d', token), mine, string.format('%d\th\t%s\t', renewed, n) .. holder,
      'u', string.format('\t%d', floor))
    if not stored and redis.call('PTTL', lock) < hold_until - now then
      redis.call('PEXPIRE', lock, hold_until - now + ttl)
    end
    if not stored and redis.call('PTTL', index) < hold_until - now then
      redis.call('PEXPIRE', index, hold_until - now + ttl)
    end
    return token
  end
  if not expiry or expiry <= now or hold_until == 0 then
    -- Ran out: it counts no more (unless the sweep above took it off
    -- already: then the HDEL finds nothing).
    local removed = redis.call('HDEL', lock, mine) == 1
    redis.call('ZREM', index, mine)
    if removed and expiry and expiry > floor and hold_until > 0 then
      used = math.max(0, used - (tonumber(n) or 0))
    end
    changed = true
    rec = nil
  end
end

-- The p: records counted in used are those the index and the sweep keep
-- (used is never below the live permits); rec is set only for a revoked
-- record of this call, which holds its permits until its expiry.

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

-- live returns the waiter at index i of the queue as who, count, its
-- limit, waiter TTL, TTL, publish and holder tail, dropping the entries
-- before it whose deadline passed; nil at the end of the queue, and nil, true
-- once 8 were dropped (the rest waits for the next call).
local dropped = 0
local function live(i)
  while true do
    local who = redis.call('ZRANGE', queue, i, i)[1]
    if not who then
      return nil
    end
    local entry = redis.call('HGET', lock, 'w:' .. who)
    local deadline, its_waiter_ttl, n, its_ttl, its_limit, its_publish, tail
    if entry then
      deadline, its_waiter_ttl, n, its_ttl, its_limit, its_publish, tail =
        string.match(entry, '^(%d+) (%d+) (%d+) (%d+) (%d+) (%u+)\t(.*)$')
    end
    if deadline and tonumber(deadline) > now then
      return who, tonumber(n), tonumber(stored) or tonumber(its_limit), tonumber(its_waiter_ttl), tonumber(its_ttl),
        its_publish, tail
    end
    redis.call('ZREM', queue, who)
    redis.call('HDEL', lock, 'w:' .. who)
    queue_changed = true
    dropped = dropped + 1
    if dropped >= 8 then
      return nil, true -- the rest waits for the next call
    end
  end
end

-- Serve the head of the queue: hand permits to the live waiters that fit,
-- in order, until one does not fit (blocked) or the queue ends; the
-- caller, when reached, takes its own (mine_served) and the serving goes on.
local blocked, mine_served, i = false, false, 0
if queued and not rec then
  local k = drop_dead_head()
  queue_changed = queue_changed or k > 0
  if k == 100 then
    dropped = 7 -- a full page: one more dead entry and the rest waits for the next call
  end
  while true do
    local who, n, its_limit, its_waiter_ttl, its_ttl, its_publish, tail = live(i)
    if not who then
      blocked = n == true
      break
    end
    if n > its_limit then
      -- It can never be served: woken, it gives up.
      redis.call(its_publish, lock .. ':grant:' .. string.match(tail, '^([^\t]*)'), 'wake ' .. who)
      i = i + 1
    elseif n > its_limit - used then
      blocked = true
      break
    elseif who == owner then
      -- The caller's turn: it takes its permits below, and the waiters
      -- behind it that fit what is left are served too.
      mine_served = true
      used = used + count
      redis.call('ZREM', queue, who)
      redis.call('HDEL', lock, 'w:' .. who)
      queue_changed = true
    else
      local expiry = now + math.min(its_ttl, its_waiter_ttl)
      hold(expiry)
      used = used + n
      local token = draw_token()
      put('p:' .. who, string.format('%d\tg\t%d\t', expiry, n) .. tail)
      file('p:' .. who, expiry)
      redis.call('ZREM', queue, who)
      redis.call('HDEL', lock, 'w:' .. who)
      queue_changed = true
      redis.call(its_publish, lock .. ':grant:' .. string.match(tail, '^([^\t]*)'),
        string.format('grant %d ', token) .. who .. ' ' .. who)
    end
  end
end

-- commit writes h, f and the records put, and keeps the hash as long as
-- what it holds; extra is the time some other field (q) lives.
local function commit(extra)
  if not changed then
    return
  end
  if used > 0 then
    put('h', string.format('semaphore\t%d\tp\t%d\t%d', hold_until, fresh, used))
    put('u', string.format('\t%d', floor))
  elseif h and string.sub(h, 1, 10) == 'semaphore\t' then
    redis.call('HDEL', lock, 'h', 'u')
  end
  if drew then
    put('f', string.format('%d', last))
  end
  if #fields > 0 then
    redis.call('HSET', lock, unpack(fields))
  end
  local need = math.max(hold_until - now, extra or 0)
  if not stored and need > 0 and redis.call('PTTL', lock) < need then
    redis.call('PEXPIRE', lock, need + ttl)
  end
  if index_until > 0 and not stored and redis.call('PTTL', index) < hold_until - now then
    redis.call('PEXPIRE', index, hold_until - now + ttl)
  end
end

-- forget_queue drops q when no entry is left in the queue.
local function forget_queue()
  if queue_changed and redis.call('EXISTS', queue) == 0 then
    redis.call('HDEL', lock, 'q')
  end
end

if mine_served or (not rec and not blocked and count <= limit - used) then
  local expiry = now + ttl
  hold(expiry)
  if not mine_served then
    used = used + count
  end
  local token = draw_token()
  put(mine, string.format('%d\th\t%d\t', expiry, count) .. holder)
  file(mine, expiry)
  commit()
  forget_queue()
  return token
end

commit()
-- The hint: when the first indexed record runs out (1 ms when some
-- already did and wait for the next sweep).
local hint = 1000
local first = redis.call('ZRANGE', index, '-inf', '(10000000000000', 'BYSCORE', 'LIMIT', 0, 1, 'WITHSCORES')
if first[2] then
  hint = math.max(1, math.min(hint, tonumber(first[2]) - now))
end
if waiter_ttl == 0 or count > limit or rec then
  forget_queue()
  return {0, hint, limit, 0}
end

if not redis.call('ZSCORE', queue, owner) then
  local tail = redis.call('ZRANGE', queue, -1, -1, 'WITHSCORES')
  local seq = 1
  if tail[2] then
    seq = tonumber(tail[2]) + 1
  end
  redis.call('ZADD', queue, seq, owner)
end
if redis.call('PTTL', queue) < waiter_ttl then
  redis.call('PEXPIRE', queue, waiter_ttl)
end
local entry = string.format('%d %d %d %d %d %s\t', now + waiter_ttl, waiter_ttl, count, ttl, limit, publish) .. holder
if not queued or tonumber(got[3]) < now + waiter_ttl then
  redis.call('HSET', lock, 'w:' .. owner, entry, 'q', string.format('%d', now + waiter_ttl))
  if not stored and redis.call('PTTL', lock) < waiter_ttl then
    redis.call('PEXPIRE', lock, waiter_ttl)
  end
else
  redis.call('HSET', lock, 'w:' .. owner, entry)
end

-- The head also looks again when the first permit may run out (a holder
-- that died releases nothing); the others wait for a grant.
local position = redis.call('ZRANK', queue, owner) + 1
return {0, math.min(hint, math.max(1, math.floor(waiter_ttl / 3))), limit, position, now_us}
