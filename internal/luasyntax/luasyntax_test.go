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
