package lint

import (
	"os"
	"strings"
	"testing"
)

// Every analyzer is named, documented, and its codes are in CODES.md, so
// the table users read cannot drift from what the linter reports.
func TestAnalyzersDocumented(t *testing.T) {
	doc, err := os.ReadFile("CODES.md")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, a := range Analyzers() {
		if a.Name == "" || a.Doc == "" || len(a.Codes) == 0 || a.Run == nil {
			t.Errorf("analyzer %+v lacks a name, doc, codes or Run", a)
		}
		if names[a.Name] {
			t.Errorf("two analyzers named %q", a.Name)
		}
		names[a.Name] = true
		for _, c := range a.Codes {
			if !strings.Contains(string(doc), c) {
				t.Errorf("code %s of analyzer %s is not in CODES.md", c, a.Name)
			}
			if !strings.Contains(string(doc), "| "+a.Name+" |") {
				t.Errorf("analyzer %s is not named in CODES.md", a.Name)
			}
		}
	}
}

// Every code has an anchor in CODES.md, so HelpURL never points nowhere,
// and every analyzer a diagnostic can name has a doc.
func TestHelpAnchors(t *testing.T) {
	doc, err := os.ReadFile("CODES.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range Analyzers() {
		for _, c := range a.Codes {
			for _, letter := range []string{"w", "e"} {
				if strings.Contains(string(doc), "| "+strings.ToUpper(letter)+c) || strings.Contains(string(doc), ", "+strings.ToUpper(letter)+c) {
					if !strings.Contains(string(doc), `<a id="`+letter+c+`"></a>`) {
						t.Errorf("CODES.md has no anchor for %s%s", letter, c)
					}
				}
			}
		}
		if AnalyzerDoc(a.Name) != a.Doc {
			t.Errorf("AnalyzerDoc(%q) is not the analyzer's doc", a.Name)
		}
	}
	for _, name := range []string{"syntax", "inline-options"} {
		if AnalyzerDoc(name) == "" {
			t.Errorf("no doc for %s diagnostics", name)
		}
	}
	if got := HelpURL("W113"); !strings.HasSuffix(got, "CODES.md#w113") {
		t.Errorf("HelpURL = %s", got)
	}
}
