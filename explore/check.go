package explore

import "testing"

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
