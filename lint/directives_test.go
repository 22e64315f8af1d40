package lint

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestInlineOptions(t *testing.T) {
	cases := []lintCase{
		{"inline applies to its line", "local a = 1 -- luacheck: ignore 211\nlocal b = 1", []string{"2:7 W211"}},
		{"standalone applies to the rest of the file", "-- luacheck: ignore 211\nlocal a = 1\nlocal b = 1", nil},
		{"ignore by name", "-- luacheck: ignore a\nlocal a = 1\nlocal b = 1", []string{"3:7 W211"}},
		{"ignore code/name", "-- luacheck: ignore 211/_.*\nlocal _a = 1\nlocal b = 1", []string{"3:7 W211"}},
		{"ignore everything", "local a = 1 -- luacheck: ignore\nlocal b = 1", []string{"2:7 W211"}},
		{"till the end of the function", "local function f()\n  -- luacheck: ignore 211\n  local a = 1\nend\nlocal b = 1\nreturn f", []string{"5:7 W211"}},
		{"push and pop", "-- luacheck: push ignore 211\nlocal a = 1\n-- luacheck: pop\nlocal b = 1", []string{"4:7 W211"}},
		{"push then options then pop", "-- luacheck: push\n-- luacheck: ignore 211\nlocal a = 1\n-- luacheck: pop\nlocal b = 1", []string{"5:7 W211"}},
		{"globals", "-- luacheck: globals helper\nhelper = 1\nreturn helper, other", []string{"3:16 W113"}},
		{"read globals", "-- luacheck: read globals shared\nreturn shared", nil},
		{"no unused", "-- luacheck: no unused\nlocal a = 1", nil},
		{"enable after ignore", "-- luacheck: ignore 2, enable 211\nlocal a = 1\nlocal function f(x) end\nreturn f", []string{"2:7 W211"}},
		{"only", "-- luacheck: only 211\nlocal a = 1\nprint(a)", nil},
		{"notes are ignored", "local a = 1 -- luacheck: ignore 211 (kept for the demo)", nil},
		{"max line length", "-- luacheck: max line length 10\nreturn 'abcdefghij'", []string{"1:11 W631", "2:11 W631"}},
		{"no max line length", "-- luacheck: no max line length\nreturn '" + string(make([]byte, 0)) + "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'", nil},
		{"unpaired pop", "-- luacheck: pop\nreturn 1", []string{"1:1 W023"}},
		{"unpaired push", "-- luacheck: push ignore 211\nreturn 1", []string{"1:1 W022"}},
		{"invalid option", "-- luacheck: frobnicate\nreturn 1", []string{"1:1 W021"}},
		{"not a directive", "-- about luacheck: ignore\nlocal a = 1", []string{"2:7 W211"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := found(t, c.src, nil, "0", "1", "2", "6")
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("source:\n%s\n(-want +got):\n%s", c.src, diff)
			}
		})
	}
}

func TestFilterPatterns(t *testing.T) {
	src := "local _a = 1\nlocal b = 1\nlocal function f(x) end\nreturn f, missing"
	cases := []struct {
		name string
		cfg  Config
		want []string
	}{
		{"all", Config{}, []string{"1:7 W211", "2:7 W211", "3:18 W212", "4:11 W113"}},
		{"ignore a code prefix", Config{Ignore: []string{"21"}}, []string{"4:11 W113"}},
		{"ignore a name", Config{Ignore: []string{"b"}}, []string{"1:7 W211", "3:18 W212", "4:11 W113"}},
		{"ignore code/name", Config{Ignore: []string{"211/_.*"}}, []string{"2:7 W211", "3:18 W212", "4:11 W113"}},
		{"only", Config{Only: []string{"1"}}, []string{"4:11 W113"}},
		{"enable takes back", Config{Ignore: []string{"2"}, Enable: []string{"212"}}, []string{"3:18 W212", "4:11 W113"}},
		{"anchored name", Config{Ignore: []string{"^_"}}, []string{"2:7 W211", "3:18 W212", "4:11 W113"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := found(t, src, &c.cfg, "1", "2")
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	t.Run("syntax errors are never filtered", func(t *testing.T) {
		if got := found(t, "local =", &Config{Ignore: []string{"0"}, Only: []string{"2"}}, "0"); len(got) != 1 {
			t.Errorf("got %v", got)
		}
	})
}

func TestMatchPattern(t *testing.T) {
	cases := []struct {
		pattern, code, symbol string
		want                  bool
	}{
		{"1", "113", "x", true},
		{"11", "121", "x", false},
		{"21[12]", "212", "x", true},
		{"foo", "211", "foo", true},
		{"foo", "211", "foobar", false},
		{"foo.*", "211", "foobar", true},
		{"211/foo", "211", "foo", true},
		{"211/foo", "212", "foo", false},
		{"_", "211", "_", true},
		{"x", "631", "", false},
		{"[", "211", "x", false}, // malformed pattern matches nothing
	}
	for _, c := range cases {
		if got := MatchPattern(c.pattern, c.code, c.symbol); got != c.want {
			t.Errorf("MatchPattern(%q, %q, %q) = %v, want %v", c.pattern, c.code, c.symbol, got, c.want)
		}
	}
	if err := ValidPattern("21[12]/x"); err != nil {
		t.Errorf("valid pattern rejected: %v", err)
	}
	if err := ValidPattern("21[12"); err == nil {
		t.Error("malformed pattern accepted")
	}
}
