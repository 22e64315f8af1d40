if x then
