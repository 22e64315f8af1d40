package explore

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redlua/redlua/simulate"
)

// Violation is a property found broken, with the shortest sequence of
// steps and events that breaks it.
type Violation struct {
	// Model and Property name what was checked; Message says what is wrong
	// in the last state of Trace.
	Model, Property, Message string
	// Trace leads from the initial state to the violating one.
	Trace []TraceStep
	// Attempt is, for a progress property, one try of its client from the
	// last state with every actor stopped (ticking whenever it can): what
	// it runs into. Every other try within the bound fails as well.
	Attempt []TraceStep
}

// TraceStep is one step of a counterexample.
type TraceStep struct {
	// At is the virtual time after the step.
	At time.Duration
	// Actor is the actor that stepped, or "env" for an environment event.
	Actor string
	// Label is the step's label, or the event's name (tick, pause,
	// replicate, crash, promote).
	Label string
	// Call is the script or command with its arguments, or what the event did.
	Call string
	// Reply is the call's reply ("" for events and local steps).
	Reply string
	// Notes are what changed: the actor's beliefs and variables, then the
	// keyspace diff ("+ key = value", "~ key = new value", "- key").
	Notes []string
}

// Error makes a Violation usable as an error; it is the full report.
func (v *Violation) Error() string { return v.String() }

// String renders the violation as a readable trace: a headline, then one
// numbered line per step (time, actor, label, call -> reply) with what the
// step changed indented below it.
func (v *Violation) String() string {
	if v == nil {
		return "explore: no violation"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "model %q: %s violated after %s: %s\n", v.Model, v.Property, plural(len(v.Trace), "step"), v.Message)
	wt, wa := 0, 0
	for _, s := range v.Trace {
		wt = max(wt, len(fmtTime(s.At.Milliseconds())))
		wa = max(wa, len(s.Actor))
	}
	for _, s := range v.Attempt {
		wt = max(wt, len(fmtTime(s.At.Milliseconds())))
		wa = max(wa, len(s.Actor))
	}
	writeSteps(&b, v.Trace, "", wt, wa)
	if len(v.Attempt) > 0 {
		fmt.Fprintf(&b, "then, with every actor stopped, one try of %s:\n", v.Attempt[0].Actor)
		writeSteps(&b, v.Attempt, "+", wt, wa)
	}
	return b.String()
}

func writeSteps(b *strings.Builder, steps []TraceStep, mark string, wt, wa int) {
	for i, s := range steps {
		line := fmt.Sprintf("%3s  %-*s  %-*s  %s: %s", mark+strconv.Itoa(i+1), wt, fmtTime(s.At.Milliseconds()), wa, s.Actor, s.Label, s.Call)
		if s.Reply != "" {
			line += " -> " + s.Reply
		}
		b.WriteString(strings.TrimRight(line, " :") + "\n")
		pad := strings.Repeat(" ", 3+2+wt+2+wa+2+2)
		for _, n := range s.Notes {
			b.WriteString(pad + n + "\n")
		}
	}
}

// keyDiff lists the keys that appear, change or disappear from one
// keyspace to the next.
func keyDiff(prefix string, a *simulate.Snapshot, aNow int64, b *simulate.Snapshot, bNow int64) []string {
	before := map[string]string{}
	for _, d := range a.Dump(time.UnixMilli(startMs + aNow)) {
		before[d.Key] = fmtValue(d, aNow)
	}
	var out []string
	seen := map[string]bool{}
	for _, d := range b.Dump(time.UnixMilli(startMs + bNow)) {
		seen[d.Key] = true
		v := fmtValue(d, bNow)
		old, ok := before[d.Key]
		switch {
		case !ok:
			out = append(out, prefix+"+ "+d.Key+" = "+v)
		case old != v:
			out = append(out, prefix+"~ "+d.Key+" = "+v)
		}
	}
	var gone []string
	for k := range before {
		if !seen[k] {
			gone = append(gone, prefix+"- "+k)
		}
	}
	sort.Strings(gone)
	return append(out, gone...)
}

// fmtValue renders a key's value compactly; sorted-set scores that look
// like instants of the model's clock show as times.
func fmtValue(d simulate.KeyDump, now int64) string {
	var s string
	switch v := d.Value.(type) {
	case string:
		s = strconv.Quote(v)
	case map[string]string:
		fields := make([]string, 0, len(v))
		for f := range v {
			fields = append(fields, f)
		}
		sort.Strings(fields)
		for i, f := range fields {
			fields[i] = f + ": " + quoteIfNeeded(v[f])
		}
		s = "{" + strings.Join(fields, ", ") + "}"
	case []simulate.ZMember:
		parts := make([]string, len(v))
		for i, z := range v {
			parts[i] = quoteIfNeeded(z.Member) + " " + fmtScore(z.Score)
		}
		s = "[" + strings.Join(parts, ", ") + "]"
	case []string:
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = quoteIfNeeded(x)
		}
		s = "[" + strings.Join(parts, " ") + "]"
	default:
		s = fmt.Sprint(v)
	}
	if d.PTTL >= 0 {
		s += " (expires " + fmtTime(now+d.PTTL) + ")"
	}
	return s
}

func fmtScore(f float64) string {
	if f >= startMs && f < startMs+1e9 && f == float64(int64(f)) {
		return "@" + fmtTime(int64(f)-startMs)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func fmtTime(ms int64) string { return "t=" + strconv.FormatInt(ms, 10) + "ms" }

func quoteIfNeeded(s string) string {
	if s == "" || strings.ContainsAny(s, " \t\n\"{}[],:") {
		return strconv.Quote(s)
	}
	return s
}

// callText renders a call: "SET lock a NX PX 100", or for a script
// "mutex.acquire@1 KEYS[lock fence] ARGV[a 100 0 \"\"]".
func callText(st *Step, args []any) string {
	words := func(xs []any) string {
		parts := make([]string, len(xs))
		for i, x := range xs {
			parts[i] = quoteIfNeeded(fmt.Sprint(x))
		}
		return strings.Join(parts, " ")
	}
	if st.Script != nil {
		keys := make([]any, len(st.Keys))
		for i, k := range st.Keys {
			keys[i] = k
		}
		return st.Script.ID() + " KEYS[" + words(keys) + "] ARGV[" + words(args) + "]"
	}
	if st.Call != nil {
		return words(args)
	}
	return words(st.Command)
}

// replyText renders a reply as redis-cli would, on one line.
func replyText(r simulate.Reply) string {
	switch r.Kind {
	case simulate.KindNil:
		return "(nil)"
	case simulate.KindStatus:
		return r.Str
	case simulate.KindError:
		return "(error) " + r.Str
	case simulate.KindInt, simulate.KindBool:
		return strconv.FormatInt(r.Int, 10)
	case simulate.KindBulk, simulate.KindVerbatim, simulate.KindBigNumber:
		return strconv.Quote(r.Str)
	case simulate.KindDouble:
		return strconv.FormatFloat(r.Float, 'g', -1, 64)
	}
	parts := make([]string, len(r.Elems))
	for i, el := range r.Elems {
		parts[i] = replyText(el)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
