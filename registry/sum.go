package registry

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
)

// Sum is the ledger of every script version ever recorded, like go.sum is
// for modules: one "name@version sha1" line each, and the word "released"
// after the SHA1 once the version shipped in a tagged release. A recorded
// version never gets other content: a change is a new version. A version
// that was recorded but never released may be retired (its file removed)
// and then never comes back with other content; a released version must
// stay, since clients of that release may still run it.
type Sum map[string]SumEntry

// SumEntry is one recorded script version.
type SumEntry struct {
	SHA1     string
	Released bool // shipped in a tagged release: its file must stay
}

var sha1Re = regexp.MustCompile(`^[0-9a-f]{40}$`)

// ReadSum parses a sum file. Blank lines and lines starting with '#' are ignored.
func ReadSum(r io.Reader) (Sum, error) {
	if r == nil {
		return nil, errors.New("registry: ReadSum needs a reader (an open sum file), got nil")
	}
	sum := Sum{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 || len(f) > 3 || !strings.Contains(f[0], "@") || !sha1Re.MatchString(f[1]) || (len(f) == 3 && f[2] != "released") {
			return nil, fmt.Errorf("sum file line %d: %q is not \"name@version <40 hex digits>\" optionally followed by \"released\"; restore the line or re-record the file", n, truncateLine(line))
		}
		if _, dup := sum[f[0]]; dup {
			return nil, fmt.Errorf("sum file line %d: %s is listed twice; keep one line per version", n, f[0])
		}
		sum[f[0]] = SumEntry{SHA1: f[1], Released: len(f) == 3}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading sum file: %w", err)
	}
	return sum, nil
}

// truncateLine keeps an error about a malformed line short.
func truncateLine(line string) string {
	const max = 120
	if len(line) <= max {
		return line
	}
	return strings.ToValidUTF8(line[:max], "") + fmt.Sprintf("... (%d bytes)", len(line))
}

// Write writes the sum file, sorted, with a comment that says how to update it.
func (s Sum) Write(w io.Writer) error {
	if w == nil {
		return errors.New("registry: Sum.Write needs a writer, got nil")
	}
	ids := make([]string, 0, len(s))
	for id := range s {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var b strings.Builder
	b.WriteString("# Every script version ever recorded and its SHA1, checked by registry.VerifySum;\n")
	b.WriteString("# \"released\" marks versions of a tagged release, whose files must stay.\n")
	b.WriteString("# Never edit a recorded script: copy it to a new version, then run\n")
	b.WriteString("#   go run github.com/redlua/redlua/cmd/luasum record <dir>\n")
	for _, id := range ids {
		if s[id].Released {
			fmt.Fprintf(&b, "%s %s released\n", id, s[id].SHA1)
		} else {
			fmt.Fprintf(&b, "%s %s\n", id, s[id].SHA1)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// VerifySum checks the registry against the sum: every recorded version that
// is present has its recorded SHA1 (recorded versions are immutable), every
// released version is present, and every script is recorded. A recorded,
// unreleased version may be absent: it was retired before any release. The
// problems are joined; the unrecorded ones wrap ErrNotRecorded, so a caller
// can tell "record it" from "you changed history".
func VerifySum(r *Registry, sum Sum) error {
	if r == nil {
		return errors.New("registry: VerifySum needs a registry, got nil; build one with registry.New")
	}
	var errs []error
	ids := make([]string, 0, len(sum))
	for id := range sum {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		s, ok := r.byID[id]
		switch {
		case !ok && sum[id].Released:
			errs = append(errs, fmt.Errorf("%s is released (marked in the sum file) but no script declares it any more; released versions must stay: restore the file", id))
		case !ok:
			// Retired before any release: only its content may never come back changed.
		case s.SHA1 != sum[id].SHA1:
			errs = append(errs, fmt.Errorf("%s: %s changed after it was recorded (recorded sha1 %s, now %s); restore the recorded text and put the change in a new version (%s@%d)",
				s.File, id, sum[id].SHA1, s.SHA1, s.Name, nextVersion(r, sum, s.Name)))
		}
	}
	for _, s := range r.all {
		if _, ok := sum[s.ID()]; !ok {
			errs = append(errs, fmt.Errorf("%s: %s: %w; record it with: go run github.com/redlua/redlua/cmd/luasum record <dir>", s.File, s.ID(), ErrNotRecorded))
		}
	}
	return errors.Join(errs...)
}

// nextVersion is the first version of name that neither the registry nor the
// sum has used: a retired version number is never reused.
func nextVersion(r *Registry, sum Sum, name string) int {
	next := r.byName[name][len(r.byName[name])-1].Version + 1
	for id := range sum {
		if n, v, ok := strings.Cut(id, "@"); ok && n == name {
			var ver int
			if _, err := fmt.Sscan(v, &ver); err == nil && ver >= next {
				next = ver + 1
			}
		}
	}
	return next
}

// Release returns a copy of sum in which every version the registry holds
// is marked released: run it (luasum release) when tagging a release, after
// every version is recorded.
func Release(r *Registry, sum Sum) (Sum, error) {
	if err := VerifySum(r, sum); err != nil {
		return nil, err
	}
	out := Sum{}
	for id, e := range sum {
		if _, ok := r.byID[id]; ok {
			e.Released = true
		}
		out[id] = e
	}
	return out, nil
}

// Record returns a copy of sum with every unrecorded script version added.
// It refuses, with VerifySum's message, when a recorded version changed or
// a released one vanished: that must be undone, not recorded.
func Record(r *Registry, sum Sum) (Sum, []string, error) {
	if err := VerifySum(r, sum); err != nil {
		if hasOtherThanNotRecorded(err) {
			return nil, nil, err
		}
	}
	out := Sum{}
	for id, e := range sum {
		out[id] = e
	}
	var added []string
	for _, s := range r.all {
		if _, ok := out[s.ID()]; !ok {
			out[s.ID()] = SumEntry{SHA1: s.SHA1}
			added = append(added, s.ID())
		}
	}
	return out, added, nil
}

func hasOtherThanNotRecorded(err error) bool {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return !errors.Is(err, ErrNotRecorded)
	}
	for _, e := range j.Unwrap() {
		if !errors.Is(e, ErrNotRecorded) {
			return true
		}
	}
	return false
}
