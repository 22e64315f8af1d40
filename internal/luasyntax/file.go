package luasyntax

import (
	"fmt"
	"sort"
)

// SyntaxError is the first syntax error of a source, as luacheck reports
// it (Pos, EndColumn, Msg) and as Lua 5.1's compiler, and so Redis,
// reports it (LuaLine, LuaMsg).
type SyntaxError struct {
	File string
	// Pos is where the offending token starts; EndColumn is the column of
	// its last byte on the same line, as luacheck reports ranges.
	Pos       Pos
	EndColumn int
	// Msg is luacheck's wording (its E011).
	Msg string
	// LuaLine is the line Lua's message names: where its lexer stood,
	// which is the end of the offending token.
	LuaLine int
	// LuaMsg is Lua 5.1's wording, e.g. "'end' expected (to close 'if' at
	// line 1) near 'print'".
	LuaMsg string
}

// Error gives "file:line:col: msg".
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Pos.Line, e.Pos.Col, e.Msg)
}

// LuaText is the error as Lua 5.1 words it for a chunk of the given name:
// "user_script:3: 'end' expected (to close 'if' at line 1) near 'print'"
// is Redis's for a script.
func (e *SyntaxError) LuaText(chunk string) string {
	return fmt.Sprintf("%s:%d: %s", chunk, e.LuaLine, e.LuaMsg)
}

// NewSyntax returns the Lua 5.2+ constructs found, in source order.
func (f *File) NewSyntax() []NewSyntax { return f.news }

// LineStarts returns the offset at which each line starts; line n
// (1-based) starts at LineStarts()[n-1].
func (f *File) LineStarts() []int { return f.lx.lineStarts }

// PosAt converts a byte offset to a position.
func (f *File) PosAt(off int) Pos { return f.lx.posAt(off) }

// EndColumn is the column of offset end on pos's line, clipped to that
// line, as luacheck shows ranges that span lines.
func (f *File) EndColumn(pos Pos, end int) int { return endColumn(f.lx, pos, end) }

// InString reports whether offset off lies inside a string token.
func (f *File) InString(off int) bool { return inSpans(f.lx.stringSpans, off) }

// InComment reports whether offset off lies inside a comment.
func (f *File) InComment(off int) bool { return inSpans(f.lx.commentSpans, off) }

// LastCodeLine is the last line holding a token other than a comment.
func (f *File) LastCodeLine() int { return f.lx.lastCodeLine }

// Lines yields each line's number, start offset and text without its
// line break.
func (f *File) Lines(fn func(line, start int, text string)) {
	starts := f.lx.lineStarts
	for i, start := range starts {
		end := len(f.Src)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		text := f.Src[start:end]
		for len(text) > 0 && (text[len(text)-1] == '\n' || text[len(text)-1] == '\r') {
			text = text[:len(text)-1]
		}
		fn(i+1, start, text)
	}
}

func inSpans(spans [][2]int, off int) bool {
	i := sort.Search(len(spans), func(i int) bool { return spans[i][1] >= off })
	return i < len(spans) && spans[i][0] <= off
}
