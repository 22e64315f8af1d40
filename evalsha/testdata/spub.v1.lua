-- name: spub
-- version: 1
-- description: Publish a payload on a shard channel that lives in the slot of the key.
-- keys: key
-- args: channel payload
return redis.call('SPUBLISH', ARGV[1], ARGV[2])
