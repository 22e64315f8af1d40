-- name: echo.fail
-- version: 1
-- description: Fail with the given message, or echo the key name when the message is empty.
-- keys: key
-- args: message
if ARGV[1] ~= '' then
  return redis.error_reply(ARGV[1])
end
return KEYS[1]
