package simulate

// globMatch reports whether s matches the glob pattern as Redis's
// stringmatchlen does for KEYS and the SCAN family's MATCH: '*', '?',
// '[abc]', '[^a-z]' (a reversed range is swapped), and '\' escaping the
// next character; an unclosed '[' runs to the end of the pattern.
func globMatch(pattern, s string) bool {
	var giveUp bool
	return globMatchFrom(pattern, s, &giveUp)
}

// globMatchFrom is stringmatchlen_impl. Once the rest of the pattern after
// a '*' matched no suffix of the string, no earlier '*' can help by
// matching more (the rest would have to start later still): giveUp stops
// the search there, which keeps patterns like "*a*a*a*a*b" from taking
// exponential time.
func globMatchFrom(pattern, s string, giveUp *bool) bool {
	p := pattern
	for len(p) > 0 && len(s) > 0 {
		switch p[0] {
		case '*':
			for len(p) > 1 && p[1] == '*' {
				p = p[1:]
			}
			if len(p) == 1 {
				return true
			}
			for i := 0; i < len(s); i++ {
				if globMatchFrom(p[1:], s[i:], giveUp) {
					return true
				}
				if *giveUp {
					return false
				}
			}
			*giveUp = true
			return false
		case '?':
			s = s[1:]
		case '[':
			var ok bool
			p, ok = matchClass(p[1:], s[0])
			if !ok {
				return false
			}
			s = s[1:]
		case '\\':
			if len(p) >= 2 {
				p = p[1:]
			}
			fallthrough
		default:
			if p[0] != s[0] {
				return false
			}
			s = s[1:]
		}
		p = p[1:]
		if len(s) == 0 {
			for len(p) > 0 && p[0] == '*' {
				p = p[1:]
			}
			break
		}
	}
	return len(p) == 0 && len(s) == 0
}

// matchClass matches c against the class that starts at p (just after
// '['). It returns the pattern positioned on the class's last character
// (the ']' or, for an unclosed class, the final character), as the
// caller then steps past it.
func matchClass(p string, c byte) (string, bool) {
	negate := len(p) > 0 && p[0] == '^'
	if negate {
		p = p[1:]
	}
	match := false
	for {
		switch {
		case len(p) == 0:
			// Unclosed: Redis steps back onto the last character so the
			// caller's step ends the pattern.
			return " ", match != negate
		case p[0] == '\\' && len(p) >= 2:
			p = p[1:]
			if p[0] == c {
				match = true
			}
		case p[0] == ']':
			return p, match != negate
		case len(p) >= 3 && p[1] == '-':
			lo, hi := p[0], p[2]
			if lo > hi {
				lo, hi = hi, lo
			}
			if c >= lo && c <= hi {
				match = true
			}
			p = p[2:]
		case p[0] == c:
			match = true
		}
		p = p[1:]
	}
}
