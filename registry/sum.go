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

// Sum records the SHA1 of every released script version, like go.sum does
// for modules: "name@version sha1" lines. A released version must never
// change; a change is a new version.
type Sum map[string]string

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
		if len(f) != 2 || !strings.Contains(f[0], "@") || !sha1Re.MatchString(f[1]) {
			return nil, fmt.Errorf("sum file line %d: %q is not \"name@version <40 hex digits>\"; restore the line or re-record the file", n, line)
		}
		if _, dup := sum[f[0]]; dup {
			return nil, fmt.Errorf("sum file line %d: %s is listed twice; keep one line per version", n, f[0])
		}
		sum[f[0]] = f[1]
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading sum file: %w", err)
	}
	return sum, nil
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
	b.WriteString("# Released script versions and their SHA1, checked by registry.VerifySum.\n")
	b.WriteString("# Never edit a released script: copy it to a new version, then run\n")
	b.WriteString("#   go run github.com/redlua/redlua/cmd/luasum record <dir>\n")
	for _, id := range ids {
		fmt.Fprintf(&b, "%s %s\n", id, s[id])
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// VerifySum checks the registry against the sum: every recorded version must
// still exist with the same SHA1 (released versions are immutable), and every
// script should be recorded. The problems are joined; the unrecorded ones wrap
// ErrNotRecorded, so a caller can tell "record it" from "you changed history".
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
		case !ok:
			errs = append(errs, fmt.Errorf("%s is released (listed in the sum file) but no script declares it any more; released versions must stay: restore the file", id))
		case s.SHA1 != sum[id]:
			errs = append(errs, fmt.Errorf("%s: %s changed after release (recorded sha1 %s, now %s); restore the released text and put the change in a new version (%s@%d)",
				s.File, id, sum[id], s.SHA1, s.Name, r.byName[s.Name][len(r.byName[s.Name])-1].Version+1))
		}
	}
	for _, s := range r.all {
		if _, ok := sum[s.ID()]; !ok {
			errs = append(errs, fmt.Errorf("%s: %s: %w; record it with: go run github.com/redlua/redlua/cmd/luasum record <dir>", s.File, s.ID(), ErrNotRecorded))
		}
	}
	return errors.Join(errs...)
}

// Record returns a copy of sum with every unrecorded script version added.
// It refuses, with VerifySum's message, when a recorded version changed or
// vanished: that must be undone, not recorded.
func Record(r *Registry, sum Sum) (Sum, []string, error) {
	if err := VerifySum(r, sum); err != nil {
		if hasOtherThanNotRecorded(err) {
			return nil, nil, err
		}
	}
	out := Sum{}
	for id, sha := range sum {
		out[id] = sha
	}
	var added []string
	for _, s := range r.all {
		if _, ok := out[s.ID()]; !ok {
			out[s.ID()] = s.SHA1
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
