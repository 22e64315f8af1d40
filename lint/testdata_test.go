package lint

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// wantComment is an expected-finding comment, in the style of
// golang.org/x/tools/go/analysis/analysistest: "-- want: W211@7 W311"
// on a line lists the findings expected on that line, by code and, after
// '@', column.
var wantComment = regexp.MustCompile(`--\s*want:\s*(.*)$`)

// TestTestdata lints each testdata/*.lua whole, with every analyzer, and
// compares the findings with the want comments beside the code: every
// finding must be wanted and every want found.
func TestTestdata(t *testing.T) {
	files, err := filepath.Glob("testdata/*.lua")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			want, withCol := wants(string(src))
			var got []string
			for _, d := range Check(filepath.Base(file), src, nil) {
				key := fmt.Sprintf("%d %s", d.Line, d.Code)
				if withCol[key] {
					key = fmt.Sprintf("%d %s@%d", d.Line, d.Code, d.Column)
				}
				got = append(got, key)
			}
			sort.Strings(got)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("findings as \"line CODE[@column]\" (-want +got):\n%s", diff)
			}
		})
	}
}

// wants reads the want comments: "line CODE" or "line CODE@col", sorted,
// and which line-code pairs name a column.
func wants(src string) ([]string, map[string]bool) {
	var out []string
	withCol := map[string]bool{}
	for i, line := range strings.Split(src, "\n") {
		m := wantComment.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		for _, w := range strings.Fields(m[1]) {
			out = append(out, fmt.Sprintf("%d %s", i+1, w))
			if code, _, ok := strings.Cut(w, "@"); ok {
				withCol[fmt.Sprintf("%d %s", i+1, code)] = true
			}
		}
	}
	sort.Strings(out)
	return out, withCol
}
