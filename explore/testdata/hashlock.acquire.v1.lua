-- name: hashlock.acquire
-- version: 1
-- description: Seed design in the style of a reentrant hash lock: take or re-enter the lock, one hash field per owner counting its holds.
-- keys: lock
-- args: owner ttl_ms
-- returns: nil when the caller holds the lock now; the lock's remaining lease in ms when another owner holds it
--
-- Correct on one server. On a primary with asynchronous replicas the grant
-- can vanish in a failover: the lock is safe only once a replica has it.

if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return nil
end
return redis.call('PTTL', KEYS[1])
