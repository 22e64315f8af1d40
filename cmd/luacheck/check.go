package main

import (
	"github.com/redlua/redlua/lint"
)

// checkSource runs the lint package on one file with its options: lint
// applies the filter rules (--only/--ignore/--enable, the -u/-r/-a/-g
// macros and the config's layers) in luacheck's order.
func checkSource(file string, src []byte, opts fileOptions) []lint.Diagnostic {
	return lint.Check(file, src, opts.cfg)
}
