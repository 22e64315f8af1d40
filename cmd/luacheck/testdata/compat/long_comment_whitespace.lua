--[[
  
	
]]
local s = [[
 
]] --[==[ x  
   
]==]
-- trailing   
return s
