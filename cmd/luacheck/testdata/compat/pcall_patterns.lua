local ok, err = pcall(redis.call, "GET", KEYS[1])
if not ok then
  return redis.error_reply(err)
end
local ok2, res = pcall(function() return cjson.decode(ARGV[1]) end)
return ok2
