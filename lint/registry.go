package lint

import (
	"io/fs"
	"strings"
	"testing/fstest"

	"github.com/redlua/redlua/registry"
)

// RegistryFile is one file of a set that is loaded as one registry
// (registry.New over a directory): Key is its path inside that directory
// (slash-separated, as fs.FS names it), File the name diagnostics carry,
// Src its contents and Config the options it is checked with (for the
// filter rules; nil means none). SyntaxError says Check found one (E011).
type RegistryFile struct {
	Key, File   string
	Src         []byte
	Config      *Config
	SyntaxError bool
}

// CheckRegistry reports, per file (out[i] for files[i]), what registry.New
// rejects in the set that Check cannot see in one file's contents alone:
// a file without a redlua header (W943), a file whose name is not the
// header's "name.vVERSION.lua" or that is not UTF-8 (W944), and a
// name@version declared by two files (W945). The registry's own message,
// which names the fix, is the diagnostic's. Problems Check reports itself
// (the shebang E941, the header's fields E942, syntax E011, KEYS/ARGV
// indexes E911/E912) are left to it, and a file with a syntax error gets
// nothing here: the syntax error is reported alone.
func CheckRegistry(files []RegistryFile) [][]Diagnostic {
	out := make([][]Diagnostic, len(files))
	fsys := fstest.MapFS{}
	index := map[string]int{}
	for i, f := range files {
		if !fs.ValidPath(f.Key) || !strings.HasSuffix(f.Key, ".lua") {
			continue
		}
		if _, dup := index[f.Key]; dup {
			continue // the same file given twice
		}
		index[f.Key] = i
		fsys[f.Key] = &fstest.MapFile{Data: f.Src}
	}
	if len(index) == 0 {
		return out
	}
	_, err := registry.New(fsys)
	for _, e := range registry.Problems(err) {
		i, ok := index[e.File]
		if !ok {
			continue
		}
		f := files[i]
		if f.SyntaxError {
			continue
		}
		var code string
		switch e.Part {
		case registry.PartHeader:
			if _, found, _ := registry.ParseHeader(f.Key, f.Src); found {
				continue // a header with a bad field: E942
			}
			code = "943"
		case registry.PartFile:
			code = "944"
		case 0: // a problem of the set: the same name@version twice
			code = "945"
		default:
			continue
		}
		d := registryDiagnostic(f, e, code)
		if f.Config == nil || Filter(f.Config.rules(), d) {
			out[i] = append(out[i], d)
		}
	}
	return out
}

// registryDiagnostic places a registry problem on its line (the first
// line for a problem of the whole file), spanning the line.
func registryDiagnostic(f RegistryFile, e *registry.Error, code string) Diagnostic {
	line := max(e.Line, 1)
	lines := strings.Split(string(f.Src), "\n")
	end := 1
	if line <= len(lines) {
		end = max(len(strings.TrimRight(lines[line-1], "\r")), 1)
	} else {
		line = 1
	}
	return Diagnostic{
		File: f.File, Line: line, Column: 1, EndColumn: end,
		Code: "W" + code, Analyzer: "redis-registry", Message: e.Msg, Severity: Warning,
	}
}
