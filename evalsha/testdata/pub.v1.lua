-- name: pub
-- version: 1
-- description: Publish a payload on a channel.
-- keys:
-- args: channel payload
return redis.call('PUBLISH', ARGV[1], ARGV[2])
