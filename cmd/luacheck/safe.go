package main

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// terminalSafe returns a copy of rs whose file names, messages, symbols
// and I/O errors carry no byte a terminal or a log viewer would act on:
// a script's bytes end up in messages (E011 "near '\x01'", a global's
// name) and a file name may hold anything. Every formatter prints what
// this returns, so none can write a raw control byte.
func terminalSafe(rs []fileResult) []fileResult {
	out := make([]fileResult, len(rs))
	for i, r := range rs {
		r.File = escapeControls(r.File)
		if r.IOErr != nil {
			if s := r.IOErr.Error(); escapeControls(s) != s {
				r.IOErr = safeError{msg: escapeControls(s), err: r.IOErr}
			}
		}
		if len(r.Diags) > 0 {
			ds := append(r.Diags[:0:0], r.Diags...)
			for j := range ds {
				ds[j].File = escapeControls(ds[j].File)
				ds[j].Message = escapeControls(ds[j].Message)
				ds[j].Symbol = escapeControls(ds[j].Symbol)
			}
			r.Diags = ds
		}
		out[i] = r
	}
	return out
}

// safeError is an error whose text has been escaped; it still unwraps to
// the original.
type safeError struct {
	msg string
	err error
}

func (e safeError) Error() string { return e.msg }
func (e safeError) Unwrap() error { return e.err }

// escapeControls writes C0 control bytes, DEL and bytes that are not
// UTF-8 as \xNN (as luacheck writes them in its messages), and C1
// controls and the bidirectional overrides (which reorder what a reader
// sees) as \uNNNN. Everything else, tabs aside, passes unchanged.
func escapeControls(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1, r < 0x20 && r != '\t', r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r >= 0x80 && r < 0xa0, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x2028, r == 0x2029:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
