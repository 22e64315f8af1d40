local function make()
  local n = 0
  return function()
    n = n + 1
    return function()
      return n
    end
  end
end
local counter = make()
local value = nil
value = counter()
return value()
