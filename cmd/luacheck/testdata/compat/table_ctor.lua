local t = {
  a = 1,
  ["b"] = 2,
  [KEYS[1]] = 3,
  4, 5;
  nested = { x = undefined_in_table },
}
local u = {}
u.x = 1
return t
