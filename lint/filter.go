package lint

// RuleKind says what a filter rule does with a diagnostic.
type RuleKind int

// The three kinds of luacheck filter rule.
const (
	// RuleEnable keeps a diagnostic that one of its patterns matches.
	RuleEnable RuleKind = iota + 1
	// RuleIgnore drops a diagnostic that one of its patterns matches.
	RuleIgnore
	// RuleOnly drops a diagnostic that none of its patterns match; with no
	// patterns it drops everything, as luacheck's only = {} does.
	RuleOnly
)

// Rule is one of luacheck's filter rules: a list of patterns (see
// MatchPattern) and what a match, or for RuleOnly a miss, does.
type Rule struct {
	Kind     RuleKind
	Patterns []string
}

// Filter applies ordered rules to a diagnostic as luacheck's filter does:
// the first enable or ignore rule that matches decides, an only rule that
// does not match drops it, and what no rule decides is kept. Syntax errors
// and invalid inline options (0xx) are never filtered.
func Filter(rules []Rule, d Diagnostic) bool {
	code := codeDigits(d.Code)
	if len(code) > 0 && code[0] == '0' {
		return true
	}
	for _, r := range rules {
		matched := false
		for _, p := range r.Patterns {
			if MatchPattern(p, code, d.Symbol) {
				matched = true
				break
			}
		}
		switch {
		case r.Kind == RuleEnable && matched:
			return true
		case r.Kind == RuleIgnore && matched:
			return false
		case r.Kind == RuleOnly && !matched:
			return false
		}
	}
	return true
}

// rules turns the Config's filter fields into ordered rules: Only first
// (a miss drops), then Enable before Ignore, so Enable takes back what
// Ignore would drop; then Config.Rules.
func (c *Config) rules() []Rule {
	var rs []Rule
	if len(c.Only) > 0 {
		rs = append(rs, Rule{Kind: RuleOnly, Patterns: c.Only})
	}
	if len(c.Ignore) > 0 {
		if len(c.Enable) > 0 {
			rs = append(rs, Rule{Kind: RuleEnable, Patterns: c.Enable})
		}
		rs = append(rs, Rule{Kind: RuleIgnore, Patterns: c.Ignore})
	}
	return append(rs, c.Rules...)
}

// codeDigits strips the severity letter from a diagnostic code.
func codeDigits(code string) string {
	if len(code) > 0 && (code[0] == 'W' || code[0] == 'E') {
		return code[1:]
	}
	return code
}

func filterDiagnostics(ds []Diagnostic, cfg *Config) []Diagnostic {
	rules := cfg.rules()
	if len(rules) == 0 {
		return ds
	}
	out := ds[:0]
	for _, d := range ds {
		if Filter(rules, d) {
			out = append(out, d)
		}
	}
	return out
}
