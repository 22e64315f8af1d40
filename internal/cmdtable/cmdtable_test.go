package cmdtable

import (
	"slices"
	"testing"
)

func TestLookupAndFlags(t *testing.T) {
	set, ok := Lookup("SET")
	if !ok || !set.IsWrite() || set.Arity != -3 {
		t.Fatalf("SET = %+v, %v; want a write command of arity -3", set, ok)
	}
	get, _ := Lookup("get")
	if get.IsWrite() {
		t.Error("GET reported as a write command")
	}
	if blpop, _ := Lookup("blpop"); !blpop.IsBlocking() {
		t.Error("BLPOP not reported as blocking")
	}
	if ev, _ := Lookup("eval"); !ev.DeniedInScripts() {
		t.Error("EVAL not reported as denied in scripts")
	}
	if _, ok := LookupSub("script", "load"); !ok {
		t.Error("SCRIPT LOAD subcommand missing")
	}
	if _, ok := Lookup("nosuchcommand"); ok {
		t.Error("unknown command found")
	}
}

func TestKeyPositions(t *testing.T) {
	cases := []struct {
		argv []string
		want []int
	}{
		{[]string{"get", "k"}, []int{1}},
		{[]string{"mset", "a", "1", "b", "2"}, []int{1, 3}},
		{[]string{"del", "a", "b", "c"}, []int{1, 2, 3}},
		{[]string{"zunionstore", "dst", "2", "a", "b", "weights", "1", "2"}, []int{1, 3, 4}},
		{[]string{"lmove", "src", "dst", "left", "right"}, []int{1, 2}},
		{[]string{"publish", "chan", "msg"}, nil},
	}
	for _, c := range cases {
		cmd, ok := Lookup(c.argv[0])
		if !ok {
			t.Fatalf("%s missing", c.argv[0])
		}
		got := cmd.KeyPositionsArgs(c.argv)
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("%v: key positions %v, want %v", c.argv, got, c.want)
		}
	}
}

func TestLookupLine(t *testing.T) {
	for _, tc := range []struct {
		line, name string
		found      bool
		noscript   bool
	}{
		{"", "hexpire", false, false},
		{"redis70", "blpop", true, true},
		{"redis72", "blpop", true, false},
		{"redis72", "wait", true, false},
		{"redis70", "wait", true, true},
		{"redis72", "waitaof", true, true},
		{"redis74", "waitaof", true, false},
		{"valkey80", "waitaof", true, false},
		{"valkey72", "waitaof", true, true},
		{"redis74", "HEXPIRE", true, false},
		{"redis80", "hpttl", true, false},
		{"valkey80", "hexpire", false, false},
		{"valkey80", "cluster|slot-stats", true, false},
		{"redis74", "cluster|slot-stats", false, false},
		{"redis72", "cluster|myshardid", true, false},
	} {
		c, ok := LookupLine(tc.line, tc.name)
		if ok != tc.found || (ok && c.DeniedInScripts() != tc.noscript) {
			t.Errorf("LookupLine(%q, %q) = %v, %v; want found %v, noscript %v", tc.line, tc.name, c, ok, tc.found, tc.noscript)
		}
	}
	// A line's blocking commands keep 7.0's key specs.
	b70, _ := Lookup("blmove")
	b72, _ := LookupLine("redis72", "blmove")
	if len(b72.KeySpecs) != len(b70.KeySpecs) || b72.FirstKey != b70.FirstKey || b72.LastKey != b70.LastKey {
		t.Errorf("redis72 blmove %+v, 7.0's %+v", b72, b70)
	}
}
