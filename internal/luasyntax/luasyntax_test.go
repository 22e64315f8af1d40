package luasyntax

import "testing"

func TestSyntaxErrorPosition(t *testing.T) {
	_, err := Parse("x.lua", []byte("local t = {\n  1\n"))
	if err == nil {
		t.Fatal("an unclosed table parsed")
	}
	if err.Pos.Line != 3 || err.Msg != "expected '}' (to close '{' on line 1) near <eof>" {
		t.Errorf("error = %+v", err)
	}
	if got := err.Error(); got != "x.lua:3:1: expected '}' (to close '{' on line 1) near <eof>" {
		t.Errorf("Error() = %q", got)
	}
}

func TestNewSyntaxRecorded(t *testing.T) {
	f, err := Parse("x.lua", []byte("goto done\n::done::\nreturn 7 // 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []int
	for _, n := range f.NewSyntax() {
		lines = append(lines, n.Pos.Line)
		if n.Message() == "" {
			t.Error("empty message")
		}
	}
	if len(lines) != 3 || lines[0] != 1 || lines[1] != 2 || lines[2] != 3 {
		t.Errorf("new syntax on lines %v, want [1 2 3]", lines)
	}
}

// CheckLua51 words errors as Lua 5.1 does (Redis passes them on); the
// differential test in registry checks a corpus against a real Redis.
func TestCheckLua51Wording(t *testing.T) {
	cases := []struct{ src, want string }{
		{"if x then\nreturn 1\nprint(2)\nend", "user_script:3: 'end' expected (to close 'if' at line 1) near 'print'"},
		{"if x then return 1 print(2) end", "user_script:1: 'end' expected near 'print'"},
		{"goto done\n::done::", "user_script:1: '=' expected near 'done'"},
		{"local s = [[a\nb", "user_script:2: unfinished long string near '<eof>'"},
		{"return 1e", "user_script:1: malformed number near '1e'"},
		{"return 0x1p4", ""},
		// Upstream Redis and Valkey build Lua with LUA_COMPAT_LSTR 1.
		{"x = [[a [[b]]", "user_script:1: nesting of [[...]] is deprecated near '['"},
		{"x = 1 --[[a\n\n[[b]]", "user_script:3: nesting of [[...]] is deprecated near '['"},
		{"x = [=[a [[b]=]", ""},
		{"x = [[[b]]", ""},
	}
	for _, c := range cases {
		e := CheckLua51("x.lua", []byte(c.src))
		got := ""
		if e != nil {
			got = e.LuaText("user_script")
		}
		if got != c.want {
			t.Errorf("%q: got %q, want %q", c.src, got, c.want)
		}
	}
}

// Parse keeps luacheck's wording and its indentation-based guess.
func TestParseLuacheckWording(t *testing.T) {
	_, err := Parse("x.lua", []byte("if x then\nreturn 1\nprint(2)\nend"))
	want := "x.lua:2:1: expected 'end' (to close 'if' on line 1) near 'return' (indentation-based guess)"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	if err != nil && err.LuaText("user_script") != "user_script:3: 'end' expected (to close 'if' at line 1) near 'print'" {
		t.Errorf("Lua's text %q", err.LuaText("user_script"))
	}
}
