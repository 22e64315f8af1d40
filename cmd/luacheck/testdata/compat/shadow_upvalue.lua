local key = KEYS[1]
local function f()
  local key = "other"
  return key
end
local function g(key)
  return key
end
return {f(), g(1), key}
