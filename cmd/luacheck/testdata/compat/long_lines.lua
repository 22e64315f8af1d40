local a = "this line is exactly long enough to go past the luacheck default limit of one hundred and twenty chars!!"
local b = "short"
-- a comment that is also much too long for the default limit of one hundred and twenty characters in luacheck, yes
local c = [[
a long string line inside a long bracket string that goes on and on and on past one hundred and twenty characters ok
]]
return a .. b .. c
