local x = KEYS[1]
local function outer(a)
  local x = a .. "1"
  local function inner(b)
    local x = b
    return x
  end
  return inner(x)
end
return outer(x)
