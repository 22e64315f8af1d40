return --[[ c ]] 1
