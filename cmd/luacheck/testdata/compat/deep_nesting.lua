local function a()
  local function b()
    local function c()
      local deep = 1
      return function() return deep end
    end
    return c
  end
  return b
end
local unused_deep = a()()()
return 1
