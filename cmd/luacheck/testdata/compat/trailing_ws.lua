local s = "trailing   "
local t = [[
line with spaces   
]]
-- comment with trailing   
local u = 1   
	
return s .. t .. u	
