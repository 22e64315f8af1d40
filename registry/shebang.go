package registry

import (
	"fmt"
	"strings"
)

// ShebangProblem says what is wrong with a "#!" first line.
type ShebangProblem int

// The problems ParseShebang reports, in the order Redis 7 checks them.
const (
	// ShebangBadEngine: the line does not start with "#!lua" (Redis:
	// "Unexpected engine in script shebang").
	ShebangBadEngine ShebangProblem = iota + 1
	// ShebangUnknownOption: an option other than flags= (Redis: "Unknown
	// lua shebang option").
	ShebangUnknownOption
	// ShebangUnknownFlag: a flag Redis 7 does not know (Redis: "Unexpected
	// flag in script shebang").
	ShebangUnknownFlag
	// ShebangRepeatedFlags: flags= given twice. Redis accepts it; the
	// registry does not, since the second list silently adds to the first.
	ShebangRepeatedFlags
)

// ShebangError is one problem of a "#!" line.
type ShebangError struct {
	Problem ShebangProblem
	// Value is the offending word: the engine ("#!python"), the option or
	// the flag.
	Value string
	// Line is the whole first line.
	Line string
}

// Error says what is wrong and how to fix it.
func (e *ShebangError) Error() string {
	if e == nil {
		return "registry: nil ShebangError"
	}
	switch e.Problem {
	case ShebangBadEngine:
		return fmt.Sprintf("the first line %q names no engine Redis knows; write \"#!lua\" or \"#!lua flags=no-writes\"", e.Line)
	case ShebangUnknownOption:
		return fmt.Sprintf("unknown shebang option %q; the only option scripts take is flags=..., e.g. \"#!lua flags=no-writes\"", e.Value)
	case ShebangUnknownFlag:
		return fmt.Sprintf("unknown script flag %q; Redis 7 knows %s", e.Value, strings.Join(KnownFlags, ", "))
	}
	return "flags= appears twice in the shebang; list all flags once, separated by commas"
}

// ParseShebang parses a Redis 7 "#!lua [flags=a,b]" first line (without
// its line break) the way Redis splits it, and returns the known flags in
// order and every problem, in the order Redis would meet them. It is the
// one flag parser: the registry, lint and the simulator all use it.
func ParseShebang(line string) (flags []string, problems []*ShebangError) {
	line = strings.TrimRight(line, "\r")
	parts := strings.Fields(line)
	if len(parts) == 0 || parts[0] != "#!lua" {
		engine := line
		if len(parts) > 0 {
			engine = parts[0]
		}
		return nil, []*ShebangError{{Problem: ShebangBadEngine, Value: engine, Line: line}}
	}
	seenFlags := false
	for _, opt := range parts[1:] {
		value, ok := strings.CutPrefix(opt, "flags=")
		if !ok {
			problems = append(problems, &ShebangError{Problem: ShebangUnknownOption, Value: opt, Line: line})
			continue
		}
		if seenFlags {
			problems = append(problems, &ShebangError{Problem: ShebangRepeatedFlags, Value: opt, Line: line})
		}
		seenFlags = true
		if value == "" {
			continue
		}
		for _, f := range strings.Split(value, ",") {
			if !isKnownFlag(f) {
				problems = append(problems, &ShebangError{Problem: ShebangUnknownFlag, Value: f, Line: line})
				continue
			}
			flags = append(flags, f)
		}
	}
	return flags, problems
}

func isKnownFlag(f string) bool {
	for _, k := range KnownFlags {
		if f == k {
			return true
		}
	}
	return false
}
