-- name: mutex.acquire
-- version: 14
-- description: Take a mutex when it is free or re-enter it; otherwise queue the caller so that a release hands the lock to that very call.
-- keys: lock queue
-- args: ttl_ms gone holder
-- returns: fence_token (an integer) when the caller holds the lock; {0, wait_hint_ms, position, server_time_us} when it must wait (position 0: not queued; {0, 0, 0} for an attempt given up on); {-1, kind} when another kind of lock holds the name
--
-- The lock is the hash lock ("{N}"), shared by every kind of lock:
--   h           the hold: mutex \t until_ms \t state \t count \t client \t attempt \t owner \t meta
--               (state h held, g granted by a release and not claimed yet, x revoked;
--               attempt is the bare id, without the call's mode, and meta is empty
--               for "the holder record of client", so that with default options h
--               is 64 bytes and the hash stays a listpack; versions before 14 wrote
--               the attempt with its mode and "~": attempts compare by their ids)
--   f           the last fencing token granted on the name
--   q           until_ms: someone may wait for the name until then (a queued
--               waiter, or a caller that waits for "released")
--   g:<attempt> until_ms: an attempt whose caller gave up (mutex.undo)
--   w:<owner>   a queued waiter: deadline_ms \t ttl_ms \t waiter_ttl_ms \t client \t attempt \t meta
--               (the bare id from version 14 on)
-- queue is a sorted set of the waiting owners by arrival. Only the server's
-- clock counts: a hold is valid until its until_ms, whatever the hash's TTL.
--
-- The arguments are shaped for the fast path, where each costs the server
-- work: gone is the field of this call's attempt, "g:<attempt>"; holder is
-- the hold record's end as the client builds it, "client \t id \t owner
-- \t meta" with the attempt's bare id and meta empty (or a label's JSON;
-- no field holds a tab: the client refuses owner tokens with one), stored
-- as it is. The attempt in gone carries the call's mode, read only off the
-- fast path: "<id>/<waiter_ttl_ms>/<flags>"
-- with flags of r (reentrant: the owner's calls are one holder), f (fair:
-- a free lock is not taken ahead of a live waiter), w (a caller that does
-- not queue waits for "released": set q) or - (none); waiter_ttl_ms 0 does
-- not queue (TryLock). The token is max(TIME in us, f + 1).
--
-- Cost: the fast path (no live hold, no q, attempt not given up) is one
-- HMGET, TIME, one HSET and one PEXPIREAT (two when the hash held no
-- fencing token before: it may be new, without a TTL), and replies with an integer; numbers go to redis.call
-- as strings, which Redis would otherwise format again. Otherwise it is
-- O(log n) in the queue of n waiters, plus the dead waiters it removes (at
-- most 100 a call, each once): it never scans the hash or the queue.

local lock = KEYS[1]
-- A lock's name is at most MaxNameBytes (1024 bytes), its key "{name}"
-- 1026: the client refuses longer names, and so does the script, for
-- callers that are not this library.
if #lock > 1026 then
  return redis.error_reply('ERR the lock key is ' .. #lock ..
    ' bytes: a lock name is at most 1024 bytes (MaxNameBytes), its key "{name}" 1026')
end
local v = redis.call('HMGET', lock, 'h', 'f', 'q', ARGV[2])
local time = redis.call('TIME')
local now_us = time[1] * 1000000 + time[2]
local ttl = tonumber(ARGV[1]) or 0
if ttl < 1 or ttl > 604800000 or ttl % 1 ~= 0 then
  return redis.error_reply('ERR ttl_ms must be a whole number of milliseconds from 1 to 604800000 (MaxTTL)')
end
local h = v[1]

if not (v[3] or v[4] or h and tonumber(string.match(h, '^[^\t]*\t(%d+)')) * 1000 > now_us) then
  -- The fast path: no live hold of any kind, no q, the attempt not given
  -- up. The token is the server's time, or f + 1 when that is not above f
  -- (a grant within the same microsecond, or a clock that stepped back).
  local token = now_us
  if v[2] and v[2] + 0 >= token then
    token = v[2] + 1
  end
  -- %d truncates: until_ms is the current millisecond plus the lease.
  local ends = string.format('%d', now_us / 1000 + ttl)
  redis.call('HSET', lock, 'h', 'mutex\t' .. ends .. '\th\t1\t' .. ARGV[3], 'f', string.format('%d', token))
  -- The hash lives as long as the hold: PEXPIREAT GT never shortens it (a
  -- given-up record or a waiter may live longer). GT also leaves alone a
  -- hash without a TTL, which lives anyway; only a hash that may be new
  -- (no f before) needs NX to get one, so that it goes once the hold ends.
  -- A hash that held f already has a TTL, or none because a Semaphore's
  -- stored count keeps it for good. Pairs in the same millisecond end at
  -- the same until_ms, where GT answers 0: this keeps them at one call.
  -- PEXPIREAT, unlike PEXPIRE, is propagated as it is.
  if redis.call('PEXPIREAT', lock, ends, 'GT') == 0 and not v[2] then
    redis.call('PEXPIREAT', lock, ends, 'NX')
  end
  return token
end

local queue = KEYS[2]
local q, gone = v[3], v[4]
local now = math.floor(now_us / 1000)
local last = tonumber(v[2]) or 0
local attempt = string.sub(ARGV[2], 3)
local client, held_by, owner, meta = string.match(ARGV[3], '^([^\t]*)\t([^\t]*)\t([^\t]*)\t([^\t]*)$')
local id, waiter_ttl, flags = string.match(attempt, '^([^/]+)/(%d+)/([rfw%-]+)$')
if held_by ~= id or string.sub(ARGV[2], 1, 2) ~= 'g:' or not flags then
  return redis.error_reply('ERR gone must be g:<id>/<waiter_ttl_ms>/<flags> (flags of r, f, w or -) and holder' ..
    ' client \\t id \\t owner \\t meta, with the same id and no other tab')
end
waiter_ttl = tonumber(waiter_ttl)
if waiter_ttl > 86400000 then
  return redis.error_reply('ERR waiter_ttl_ms must be a whole number of milliseconds from 0 to 86400000 (MaxWaiterTTL)')
end
if gone and tonumber(gone) > now then
  return {0, 0, 0} -- the caller gave up on this attempt: it takes nothing
end
local reentrant = string.find(flags, 'r', 1, true) ~= nil
local fair = string.find(flags, 'f', 1, true) ~= nil
local waiting = q and tonumber(q) > now

local function keep_for(ms)
  if redis.call('PEXPIRE', lock, ms, 'GT') == 0 then
    redis.call('PEXPIRE', lock, ms, 'NX')
  end
end

-- A hold taken while q is there keeps the queue as long as the hash: the
-- queue is how the scripts find the entries of waiters that died.
local function hold_for(ms)
  keep_for(ms)
  if q then
    redis.call('PEXPIRE', queue, ms, 'GT')
  end
end

-- next_live finds the oldest live waiter: it looks at the head, and when
-- that one is dead, at the next 100 at once, and drops the dead ones ahead
-- of the first live one (each once). It returns that waiter and its entry
-- (still queued); nil when the queue is empty now, false when 100 dead
-- ones went and more may follow.
local function live(entry)
  local deadline = entry and tonumber(string.match(entry, '^(%d+)\t%d+\t%d+\t[^\t]*\t[^\t]*\t'))
  return deadline ~= nil and deadline > now
end
local function next_live()
  local head = redis.call('ZRANGE', queue, 0, 0)[1]
  if not head then
    return nil
  end
  local entry = redis.call('HGET', lock, 'w:' .. head)
  if live(entry) then
    return head, entry
  end
  local heads = redis.call('ZRANGE', queue, 0, 99)
  local fields = {}
  for i, who in ipairs(heads) do
    fields[i] = 'w:' .. who
  end
  local entries = redis.call('HMGET', lock, unpack(fields))
  local dead = #heads
  for i = 2, #heads do
    if live(entries[i]) then
      dead = i - 1
      head, entry = heads[i], entries[i]
      break
    end
  end
  redis.call('ZREMRANGEBYRANK', queue, 0, dead - 1)
  redis.call('HDEL', lock, unpack(fields, 1, dead))
  if dead < #heads then
    return head, entry
  end
  if #heads < 100 then
    return nil
  end
  return false
end

local kind, ends, state, count, held_attempt, holder, held_meta
if h then
  kind, ends, state = string.match(h, '^([^\t]*)\t(%d+)\t(%a)')
  ends = tonumber(ends)
  if ends <= now then
    kind = nil -- that hold ended
  elseif kind ~= 'mutex' then
    return {-1, kind}
  else
    count, held_attempt, holder, held_meta =
      string.match(h, '^[^\t]*\t%d+\t%a\t(%d+)\t[^\t]*\t([^/\t]*)[^\t]*\t([^\t]*)\t(.*)$')
    if held_meta == '~' then
      held_meta = '' -- written before version 14: the same, the holder record's
    end
  end
end

-- A q whose time passed (no release came to drop it): each waiter's
-- deadline is at most q, so none of them is live. The dead waiters go from
-- the head of the queue, at most 100 a call (each once), and q with the
-- last of them: the next acquire is fast again. Until then q stays, with
-- its time passed, and the calls that see it sweep on.
if q and not waiting then
  local dead = redis.call('ZRANGE', queue, 0, 99)
  if #dead > 0 then
    local fields = {}
    for i, who in ipairs(dead) do
      fields[i] = 'w:' .. who
    end
    redis.call('HDEL', lock, unpack(fields))
    redis.call('ZREMRANGEBYRANK', queue, 0, #dead - 1)
  end
  if #dead < 100 then
    redis.call('HDEL', lock, 'q')
    q = nil
  end
end

-- A caller that takes the lock leaves the queue.
local function leave_queue(who)
  if q then
    redis.call('ZREM', queue, who)
    redis.call('HDEL', lock, 'w:' .. who)
  end
end

-- A hold records the attempt's bare id (held_attempt is the id of what
-- any version wrote).
local function record(st, n, until_ms, who_client, who_meta)
  return table.concat({'mutex', until_ms, st, n, who_client, id, owner, who_meta}, '\t')
end

if kind and holder == owner and state ~= 'x' then
  local hold
  if state == 'g' then
    if held_attempt == id or reentrant then
      -- A release handed the lock to this call (or to this reentrant
      -- owner): claim it for the whole lease, as this call's hold.
      hold = record('h', count, now + ttl, client, held_meta)
    end
  elseif reentrant then
    hold = record('h', count + 1, math.max(ends, now + ttl), client, held_meta)
  elseif held_attempt == id then
    -- The same call again (a retry after a reply was lost): it holds it.
    hold = record('h', count, now + ttl, client, held_meta)
  end
  if hold then
    redis.call('HSET', lock, 'h', hold)
    hold_for(ttl)
    leave_queue(owner)
    return last
  end
end

if not kind then
  -- Free. Fair mode: take the lock only when no live waiter (nor one
  -- not looked at yet) is ahead; the dead ones at the head go.
  local ahead = false
  if fair and waiting then
    local head = next_live()
    ahead = head ~= nil and head ~= owner
  end
  if not ahead then
    leave_queue(owner)
    local token = math.max(now_us, last + 1)
    redis.call('HSET', lock, 'h', record('h', 1, now + ttl, client, meta), 'f', string.format('%d', token))
    hold_for(ttl)
    return token
  end
end

-- Wait: the hint counts from the hold's expiry (a free lock that a fair
-- queue keeps for its head: look again soon).
local left = 1
if kind then
  left = ends - now
end
if waiter_ttl == 0 then
  if string.find(flags, 'w', 1, true) and kind and (not waiting or tonumber(q) < ends) then
    -- Tell the release to publish "released": this caller waits for it
    -- until the hold ends, and looks again then anyway.
    redis.call('HSET', lock, 'q', string.format('%d', ends))
  end
  return {0, left, 0}
end

if not redis.call('ZSCORE', queue, owner) then
  local tail = redis.call('ZRANGE', queue, -1, -1, 'WITHSCORES')
  local seq = 1
  if tail[2] then
    seq = tonumber(tail[2]) + 1
  end
  redis.call('ZADD', queue, seq, owner)
end
local deadline = now + waiter_ttl
-- The entry holds the bare id too: a release hands the lock over with the
-- entry's attempt, into h and the grant message (an older version's entry
-- has the attempt with its mode, which that version's claim compares).
local entry = deadline .. '\t' .. ttl .. '\t' .. waiter_ttl .. '\t' .. client .. '\t' .. id .. '\t' .. meta
if waiting and tonumber(q) >= deadline then
  redis.call('HSET', lock, 'w:' .. owner, entry)
else
  -- Tell the release to look at the queue, until this waiter's deadline.
  redis.call('HSET', lock, 'w:' .. owner, entry, 'q', string.format('%d', deadline))
end
-- Both keys live at least as long as this entry, and the queue as long as
-- the hash (PTTL is -1 without a TTL): the queue is how the scripts find
-- the entries of waiters that died (no script scans the hash).
keep_for(waiter_ttl)
local life = math.max(redis.call('PTTL', lock), waiter_ttl)
if redis.call('PTTL', queue) < life then
  redis.call('PEXPIRE', queue, life)
end

-- Refresh before the waiter lease runs out; the head also looks again when
-- the hold ends, in case the holder died without releasing.
local position = redis.call('ZRANK', queue, owner) + 1
local hint = math.floor(waiter_ttl / 3)
if position == 1 and left < hint then
  hint = left
end
-- The server's time lets the waiter tell a grant made after this call
-- (its token, from the server's clock, is larger) from an older one.
return {0, math.max(hint, 1), position, now_us}
