local t = {1, 2,}
return #t
