print("hi")
local f = io.open("x")
local t = os.time()
local m = require("x")
dofile("x")
loadfile("y")
local ok = pcall(load, "return 1")
local s = loadstring("return 1")
return {f, t, m, ok, s, bit.band(1, 3), struct.pack("i", 1), cmsgpack.pack(1)}
