package explore

import (
	"strings"
	"testing"
	"time"

	"github.com/redlua/redlua/registry"
)

// Check explores the model and fails the test with the counterexample's
// trace when a property is violated, or with the model's error when it
// cannot be explored. On success it logs the number of states and the time.
func Check(t testing.TB, m *Model) *Result {
	if t == nil {
		// Nothing to report a failure to: the caller gets what Run found.
		res, _ := Run(m)
		return res
	}
	t.Helper()
	res, err := Run(m)
	if err != nil {
		t.Fatal(err)
		return nil
	}
	if res.Violation != nil {
		t.Fatalf("explore: %d states visited\n%s", res.States, res.Violation)
		return res
	}
	t.Logf("explore: %s", res)
	return res
}

// CheckFails explores a model that must break property, such as one whose
// script was given a bug with Mutate, and fails the test unless exploring
// finds a violation of exactly that property. A safety check is worth
// having only when it is seen to fail: pair each Check with a CheckFails of
// a broken copy. It logs the counterexample it found.
func CheckFails(t testing.TB, m *Model, property string) *Result {
	t.Helper()
	res, err := Run(m)
	if err != nil {
		t.Fatal(err)
		return nil
	}
	if res.Violation == nil {
		t.Fatalf("%s passed, but it must break %q: %s", m.Name, property, res)
		return res
	}
	if res.Violation.Property != property {
		t.Fatalf("%s broke %q, want %q:\n%s", m.Name, res.Violation.Property, property, res.Violation)
		return res
	}
	t.Logf("%s fails as it should: a %d-step trace (%d states)\n%s", m.Name, len(res.Violation.Trace), res.States, res.Violation)
	return res
}

// Mutate returns a copy of s with the first occurrence of from replaced by
// to: one condition changed, for CheckFails. It fails the test when s does
// not contain from (the script moved on; update the mutation) or when the
// copy does not parse or changes nothing.
func Mutate(t testing.TB, s *registry.Script, from, to string) *registry.Script {
	t.Helper()
	if !strings.Contains(s.Source, from) {
		t.Fatalf("%s no longer contains %q; update the mutation", s.ID(), from)
		return nil
	}
	b, err := registry.ParseScript(s.ID()+".broken.lua", []byte(strings.Replace(s.Source, from, to, 1)))
	if err != nil || b.SHA1 == s.SHA1 {
		t.Fatalf("could not break %s: %v", s.ID(), err)
		return nil
	}
	return b
}

// CheckSymmetry verifies the model's Symmetric declaration
// (VerifySymmetry) and fails the test when it does not hold, saying which
// actors the model tells apart and where. Run it on bounds small enough
// to explore without the reduction, beside Check on the full ones.
func CheckSymmetry(t testing.TB, m *Model) *Result {
	t.Helper()
	res, err := VerifySymmetry(m)
	if err != nil {
		t.Fatal(err)
		return nil
	}
	t.Logf("explore: model %q: the symmetric actors are interchangeable in all %d states (%d transitions, each with its twins) in %v",
		res.Model, res.States, res.Transitions, res.Elapsed.Round(time.Millisecond))
	return res
}
