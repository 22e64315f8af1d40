package simulate

import "testing"

// zrangeCases cover ZRANGE's BYSCORE, BYLEX, REV, LIMIT and WITHSCORES and
// the older range commands, with Redis 7.0's errors and quirks: a
// negative LIMIT count means all, a negative offset nothing, "LIMIT o -1"
// is accepted by rank, strtod reads score bounds ("" is 0, leading spaces
// and hex allowed), and BYLEX over mixed scores walks the set in score
// order as a listpack-encoded set does.
var zrangeCases = [][]string{
	{"ZADD z 1 a 2 b 3 c 4 d 5 e", "ZRANGE z 2 4 BYSCORE", "ZRANGE z (2 4 BYSCORE", "ZRANGE z 2 (4 BYSCORE WITHSCORES", "ZRANGE z (2 (4 BYSCORE", "ZRANGE z -inf +inf BYSCORE", "ZRANGE z -inf (3 BYSCORE", "ZRANGE z 4 2 BYSCORE REV", "ZRANGE z +inf -inf BYSCORE REV WITHSCORES", "ZRANGE z (4 (1 BYSCORE REV", "ZRANGE z 2 4 BYSCORE REV", "ZRANGE z 3 3 BYSCORE", "ZRANGE z (3 3 BYSCORE", "ZRANGE z 3 (3 BYSCORE"},
	{"ZADD z 1 a 2 b 3 c 4 d 5 e", "ZRANGE z -inf +inf BYSCORE LIMIT 1 2", "ZRANGE z -inf +inf BYSCORE LIMIT 1 -1", "ZRANGE z -inf +inf BYSCORE LIMIT 1 -5 WITHSCORES", "ZRANGE z -inf +inf BYSCORE LIMIT 0 0", "ZRANGE z -inf +inf BYSCORE LIMIT -1 2", "ZRANGE z -inf +inf BYSCORE LIMIT 5 2", "ZRANGE z -inf +inf BYSCORE LIMIT 4 2", "ZRANGE z +inf -inf BYSCORE REV LIMIT 1 2 WITHSCORES", "ZRANGE z 4 2 BYSCORE REV LIMIT 2 10", "ZRANGE z 2 4 BYSCORE LIMIT 3 1", "ZRANGE z -inf +inf BYSCORE LIMIT x 1", "ZRANGE z -inf +inf BYSCORE LIMIT 1 x", "ZRANGE z -inf +inf BYSCORE LIMIT 1", "ZRANGE z -inf +inf BYSCORE LIMIT 1.5 2"},
	{"ZADD z 1 a 2 b 3 c", "ZRANGE z 0 -1 LIMIT 0 1", "ZRANGE z 0 -1 LIMIT 5 -1", "ZRANGE z 0 -1 LIMIT 0 -2", "ZRANGE z [a [c BYLEX WITHSCORES", "ZRANGE z [a [c BYLEX LIMIT 0 1 WITHSCORES", "ZRANGE z 0 -1 BYSCORE BYLEX", "ZRANGE z 0 -1 BYSCORE BYSCORE", "ZRANGE z 0 -1 REV REV", "ZRANGE z 0 -1 FOO", "ZRANGE z x 1 BYSCORE", "ZRANGE z 1 x BYSCORE", "ZRANGE z a [c BYLEX", "ZRANGE z [a c BYLEX", "ZRANGE z 1 2 BYLEX", "ZRANGE z x 1", "ZRANGE z 0 1.5", "ZRANGE z nan 1 BYSCORE", "ZRANGE z 0 -1 withscores rev"},
	{"ZADD z 0 a 0 b 0 c 0 d 0 e 0 f", "ZRANGE z - + BYLEX", "ZRANGE z [b [d BYLEX", "ZRANGE z (b (d BYLEX", "ZRANGE z (b [d BYLEX", "ZRANGE z - (c BYLEX", "ZRANGE z [c + BYLEX", "ZRANGE z + - BYLEX REV", "ZRANGE z [d [b BYLEX REV", "ZRANGE z (d - BYLEX REV LIMIT 1 2", "ZRANGE z - + BYLEX LIMIT 2 3", "ZRANGE z - + BYLEX LIMIT -1 3", "ZRANGE z - + BYLEX LIMIT 2 -1", "ZRANGE z - + BYLEX LIMIT 10 1", "ZRANGE z + - BYLEX", "ZRANGE z - - BYLEX", "ZRANGE z [c [c BYLEX", "ZRANGE z (c [c BYLEX", "ZRANGE z [ + BYLEX", "ZRANGE z ( + BYLEX", "ZRANGE z - [ BYLEX", "ZRANGE z [bb [e BYLEX", "ZRANGE z [d [b BYLEX"},
	{"ZADD z 0 a 0 b 0 c 0 d", "ZRANGEBYLEX z - +", "ZRANGEBYLEX z [b + LIMIT 1 1", "ZREVRANGEBYLEX z + -", "ZREVRANGEBYLEX z [c - LIMIT 0 2", "ZRANGEBYLEX z - + WITHSCORES", "ZRANGEBYLEX z - + REV", "ZRANGEBYLEX z - + BYSCORE", "ZRANGEBYLEX z a +", "ZREVRANGEBYLEX z - +", "ZLEXCOUNT z - +", "ZLEXCOUNT z (a [c", "ZLEXCOUNT z x +", "ZLEXCOUNT missing - +", "ZREMRANGEBYLEX z (a [c", "ZRANGE z 0 -1", "ZREMRANGEBYLEX z x y", "ZREMRANGEBYLEX z - +", "EXISTS z"},
	// Mixed scores: BYLEX follows the listpack's score order.
	{"ZADD z 3 a 1 b 2 c 0 d 5 e", "ZRANGE z [a [c BYLEX", "ZRANGE z [b [e BYLEX", "ZRANGE z - + BYLEX", "ZRANGE z [c [a BYLEX REV", "ZRANGE z + - BYLEX REV", "ZRANGE z [b + BYLEX LIMIT 1 2", "ZLEXCOUNT z [b [e", "ZLEXCOUNT z - (c", "ZREMRANGEBYLEX z [b [d", "ZRANGE z 0 -1 WITHSCORES"},
	{"ZADD z 1 a 2 b 3 c 4 d", "ZRANGEBYSCORE z 2 3", "ZRANGEBYSCORE z 2 3 WITHSCORES LIMIT 1 1", "ZRANGEBYSCORE z -inf +inf LIMIT 1 2 WITHSCORES", "ZREVRANGEBYSCORE z 3 2", "ZREVRANGEBYSCORE z +inf -inf WITHSCORES LIMIT 1 2", "ZREVRANGEBYSCORE z (4 (1", "ZREVRANGEBYSCORE z 1 4", "ZRANGEBYSCORE z 1 4 REV", "ZRANGEBYSCORE z 1 4 BYLEX", "ZREVRANGEBYSCORE z x 1", "ZRANGEBYSCORE z 1 4 LIMIT 0", "ZRANGEBYSCORE z 1 4 WITHSCORES WITHSCORES", "ZREVRANGE z 0 1 WITHSCORES", "ZREVRANGE z 0 -1 LIMIT 0 1", "ZREVRANGE z 0 -1 REV", "ZREVRANGE z 0 -1 BYSCORE"},
	// Score bounds are read by strtod.
	{"ZADD z 0 a 1 b 16 c 1000 d inf e -inf f", "ZCOUNT z '' 1", "ZCOUNT z ( 1", "ZCOUNT z ' 1' 16", "ZCOUNT z '1 ' 16", "ZCOUNT z 0x10 0x10", "ZCOUNT z 0x1p4 +inf", "ZCOUNT z 1e3 1e3", "ZCOUNT z -1e400 1e400", "ZCOUNT z -inf -inf", "ZCOUNT z inf inf", "ZCOUNT z (inf +inf", "ZCOUNT z infinity -infinity", "ZCOUNT z -Infinity +INF", "ZCOUNT z nan 1", "ZCOUNT z 1_0 20", "ZCOUNT z +1 +16", "ZCOUNT z ((1 2", "ZCOUNT z .5 1.", "ZCOUNT z 1e 2", "ZCOUNT z '\t1' 2", "ZRANGE z ' ' 1 BYSCORE", "ZRANGE z 0x 1 BYSCORE", "ZREMRANGEBYSCORE z 0x10 (inf", "ZRANGE z 0 -1 WITHSCORES"},
	{"ZADD z 1 a 2 b 3 c", "ZRANGESTORE d z 0 -1", "ZRANGE d 0 -1 WITHSCORES", "ZRANGESTORE d z (1 +inf BYSCORE LIMIT 0 1", "ZRANGE d 0 -1 WITHSCORES", "ZRANGESTORE d z +inf -inf BYSCORE REV LIMIT 0 2", "ZRANGE d 0 -1 WITHSCORES", "ZRANGESTORE d z [b + BYLEX", "ZRANGE d 0 -1", "ZRANGESTORE d z 0 -1 WITHSCORES", "ZRANGESTORE d z 5 10", "EXISTS d", "SET s x", "EXPIRE s 100", "ZRANGESTORE s z 0 0", "TYPE s", "TTL s", "ZRANGESTORE d s 0 -1", "ZRANGESTORE d missing 0 -1", "ZRANGESTORE s missing 0 -1", "EXISTS s"},
	{"SET s x", "ZRANGE s 0 -1", "ZRANGE s 0 -1 BYSCORE", "ZRANGE s x y BYSCORE", "ZRANGEBYLEX s - +", "ZRANGEBYLEX s x +", "ZCOUNT s 0 1", "ZLEXCOUNT s - +", "ZREMRANGEBYSCORE s 0 1", "ZREMRANGEBYLEX s - +", "ZRANGE missing 0 -1 BYSCORE", "ZRANGE missing x 1 BYSCORE", "ZREVRANGEBYLEX missing + -", "ZCOUNT missing 0 1", "ZRANGE z 0", "ZRANGEBYLEX z -", "ZRANGESTORE d z 0"},
}

func TestZRangeMatchesRedis(t *testing.T) { runCommandCases(t, zrangeCases) }

// zsetZeroCases: a listpack stores an integral score as an integer, so -0
// is read back as 0 although ZADD INCR replies -0.
var zsetZeroCases = [][]string{
	{"ZINCRBY z -0 a", "ZSCORE z a", "ZADD z -0 b", "ZSCORE z b", "ZADD z INCR -0 c", "ZRANGE z 0 -1 WITHSCORES", "ZINCRBY z -0 a", "ZADD z CH -0 a"},
}

func TestZSetNegativeZeroMatchesRedis(t *testing.T) { runCommandCases(t, zsetZeroCases) }
