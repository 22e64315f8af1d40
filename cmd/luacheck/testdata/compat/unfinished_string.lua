local s = "unfinished
