#!lua flags=no-writes
-- name: lock.inspect
-- version: 3
-- description: Report one page of what a lock name holds, whatever its kind: the server's time, the hold (h, f, q, l), the queues' lengths and up to count fields of the name's hash from an HSCAN cursor, with the queue rank of each waiter in the page, for operators asking who holds a lock.
-- keys: lock queue squeue
-- args: cursor count
-- returns: {server_time_ms, {h, f, q, l}, {queue length, squeue length}, next_cursor, {field, value, ...} of the page, {rank of each w:<owner> field of the page, in page order}}
--
-- lock is the name's hash K ("{N}", see docs/layout.md); the client reads the
-- hold (h), the last fencing token (f), whether someone waits (q) and a
-- Semaphore's limit (l) from the HMGET every page makes, and the holders
-- (r:<owner>, p:<owner>) and waiters (w:<owner>, W:<owner>) from the page:
-- one HSCAN of K from cursor with COUNT count (1 to 1000). next_cursor is
-- HSCAN's: "0" when the scan is complete, as SCAN's; a field may appear in
-- two pages (the caller keeps one). A small hash (a listpack) answers in
-- one page whatever count is. The queues are a Mutex's and a Semaphore's
-- sorted sets: their lengths (ZCARD) come with every page, and each w:
-- field of the page gets its rank in queue or, when absent there, in
-- squeue (ZRANK; -1 in neither). The client judges every expiry against
-- the server time returned with them. A key of another type (written by
-- another tool) reads as empty rather than failing the report.
--
-- Read-only, so it may run on replicas with EVALSHA_RO: operators asking
-- "who holds this lock?" need not load the primary. Cost per page: an
-- HMGET, one HSCAN visiting about count fields (a listpack: its at most
-- 128 fields) and two ZRANKs (log N) per waiter in the page, whatever
-- the name holds.

local lock = KEYS[1]
local cursor, count = ARGV[1], tonumber(ARGV[2])
if not string.match(cursor, '^%d+$') or #cursor > 20 then
  return redis.error_reply('ERR cursor must be a whole number, as HSCAN returned it ("0" to start)')
end
if not count or count < 1 or count > 1000 or count % 1 ~= 0 then
  return redis.error_reply('ERR count must be a whole number from 1 to 1000')
end

local function is(key, type_name)
  return redis.call('TYPE', key).ok == type_name
end

-- The server's time in ms. miniredis (2.40) refuses TIME in a read-only
-- script, which Redis allows; there the time is read as K's expiry time
-- less its remaining time (K has an expiry while it holds anything). When
-- K has none, 0.
local function server_ms()
  local time = redis.pcall('TIME')
  if not time.err then
    return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  end
  local at, left = redis.call('PEXPIRETIME', lock), redis.call('PTTL', lock)
  if at > 0 and left >= 0 then
    return at - left
  end
  return 0
end

local head, next_cursor, page = {}, '0', {}
if is(lock, 'hash') then
  local got = redis.call('HMGET', lock, 'h', 'f', 'q', 'l')
  for i = 1, 4 do
    head[i] = got[i] or ''
  end
  local scan = redis.call('HSCAN', lock, cursor, 'COUNT', count)
  next_cursor, page = scan[1], scan[2]
else
  head = {'', '', '', ''}
end

local queues, lengths = {}, {}
for i = 2, 3 do
  if is(KEYS[i], 'zset') then
    queues[#queues + 1] = KEYS[i]
    lengths[i - 1] = redis.call('ZCARD', KEYS[i])
  else
    lengths[i - 1] = 0
  end
end

local ranks = {}
for i = 1, #page, 2 do
  local field = page[i]
  if string.sub(field, 1, 2) == 'w:' then
    local who, rank = string.sub(field, 3), nil
    for _, queue in ipairs(queues) do
      rank = redis.call('ZRANK', queue, who)
      if rank then
        break
      end
    end
    ranks[#ranks + 1] = rank or -1
  end
end
return {server_ms(), head, lengths, next_cursor, page, ranks}
