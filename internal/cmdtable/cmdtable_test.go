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
