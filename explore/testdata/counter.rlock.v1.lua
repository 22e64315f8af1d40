-- name: counter.rlock
-- version: 1
-- description: Seed design (flawed on purpose): take a read hold by bumping one shared reader counter, unless a writer is in.
-- keys: writer readers
-- args:
-- returns: 1 when the read hold is taken, 0 when a writer holds the lock
--
-- Nothing records which client holds a read hold and nothing expires, so
-- any client can give one back and a reader that dies keeps its hold for ever.

if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
redis.call('INCR', KEYS[2])
return 1
