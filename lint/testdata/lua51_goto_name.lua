-- In Lua 5.1, which Redis runs, goto is an ordinary name.
local goto = 1
return goto
