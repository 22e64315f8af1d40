package lint

import (
	"strings"
	"testing"
)

func TestCheckRegistry(t *testing.T) {
	script := "-- name: a.b\n-- version: 2\n-- description: d.\n-- keys:\n-- args:\nreturn 1\n"
	files := []RegistryFile{
		{Key: "a.b.v2.lua", File: "dir/a.b.v2.lua", Src: []byte(script)},
		{Key: "sub/a.b.v2.lua", File: "dir/sub/a.b.v2.lua", Src: []byte(script)},
		{Key: "wrong.lua", File: "dir/wrong.lua", Src: []byte(strings.Replace(script, "version: 2", "version: 3", 1))},
		{Key: "plain.lua", File: "dir/plain.lua", Src: []byte("return 1\n")},
		{Key: "ignored.lua", File: "dir/ignored.lua", Src: []byte("return 2\n"), Config: &Config{Ignore: []string{"943"}}},
		{Key: "broken.lua", File: "dir/broken.lua", Src: []byte("if\n"), SyntaxError: true},
		{Key: "badfield.v1.lua", File: "dir/badfield.v1.lua", Src: []byte("-- name: badfield\n-- version: x\nreturn 1\n")},
	}
	got := CheckRegistry(files)
	want := []string{
		"",
		"dir/sub/a.b.v2.lua:1:1: (W945) a.b@2 is declared again (first in a.b.v2.lua); give the new text a new version",
		"dir/wrong.lua:1:1: (W944) the file name wrong.lua does not match the header's a.b@3; rename the file a.b.v3.lua",
		"dir/plain.lua:1:1: (W943) the file has no header",
		"", // filtered by its config
		"", // its syntax error is reported alone
		"", // a header with a bad field is E942, Check's
	}
	for i, w := range want {
		var lines []string
		for _, d := range got[i] {
			lines = append(lines, d.String())
		}
		text := strings.Join(lines, "\n")
		if (w == "") != (text == "") || !strings.HasPrefix(text, w) {
			t.Errorf("%s: got %q, want %q", files[i].Key, text, w)
		}
	}
}
