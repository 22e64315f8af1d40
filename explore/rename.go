package explore

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"sync"

	"github.com/redlua/redlua/simulate"
)

// Renaming actors inside a keyspace, for the symmetry reduction: the
// keyspace's canonical encoding (simulate.Snapshot.AppendCanonical) read
// back into its keys and strings, and written again with names replaced
// and in the order the encoding keeps (keys by name, set members by name,
// sorted-set members by score then name; a hash's fields and a list's
// elements as they stand).

// text is one string of the keyspace with the places a symmetric actor's
// name stands in it.
type text struct {
	s    string
	refs []nameRef
}

// nameRef is one occurrence of actor's name at s[at:end].
type nameRef struct{ at, end, actor int32 }

// ksValue is one key of a snapshot, or one change of a delta.
type ksValue struct {
	key    text
	head   string // the value's kind byte, expiry and '|'; "-" for a delta's deletion
	layout layout
	items  []text   // a hash's fields and values in turn; members; elements; the string
	scores []string // a sorted set's scores, as encoded (hex bits of the float)
	named  bool     // a name stands in the key or in the value
}

// ksParsed is a snapshot's or a delta's encoding read into its values.
type ksParsed struct {
	raw     []byte // the encoding itself, written as it is when no name stands in it
	delta   bool
	entries []ksValue
	named   bool  // a name stands somewhere
	keyRefs bool  // a name stands in a key's name: renaming may reorder keys
	err     error // the encoding could not be read (and the rest is empty)
}

// layout is how a value's content is encoded.
type layout uint8

const (
	layoutDeleted layout = iota
	layoutString
	layoutHash
	layoutZSet
	layoutList
	layoutSet
)

// layouts maps the byte that starts a value's encoding (its kind) to the
// value's layout, learnt from the simulator so that the reader follows it.
var layouts = sync.OnceValue(func() map[byte]layout {
	out := map[byte]layout{}
	for _, c := range []struct {
		cmd []any
		l   layout
	}{
		{[]any{"SET", "k", "v"}, layoutString},
		{[]any{"HSET", "k", "f", "v"}, layoutHash},
		{[]any{"ZADD", "k", 1, "m"}, layoutZSet},
		{[]any{"RPUSH", "k", "x"}, layoutList},
		{[]any{"SADD", "k", "m"}, layoutSet},
	} {
		srv := simulate.New()
		if r, err := srv.DoReply(context.Background(), c.cmd...); err != nil || r.Kind == simulate.KindError {
			continue
		}
		if enc := srv.Snapshot().AppendCanonical(nil); len(enc) > 3 && string(enc[:3]) == "1:k" {
			out[enc[3]] = c.l
		}
	}
	return out
})

// reader reads one canonical encoding.
type reader struct {
	b   []byte
	i   int
	sym *symmetry
	bad string
}

func (r *reader) fail(format string, args ...any) {
	if r.bad == "" {
		r.bad = fmt.Sprintf(format, args...) + fmt.Sprintf(" (byte %d of %q)", r.i, r.b)
	}
}

// str reads one length-prefixed string.
func (r *reader) str() text {
	j := r.i
	for j < len(r.b) && '0' <= r.b[j] && r.b[j] <= '9' {
		j++
	}
	if j == r.i || j >= len(r.b) || r.b[j] != ':' {
		r.fail("a length-prefixed string was expected")
		return text{}
	}
	n, err := strconv.Atoi(string(r.b[r.i:j]))
	if err != nil || j+1+n > len(r.b) {
		r.fail("a string runs past the end")
		return text{}
	}
	s := string(r.b[j+1 : j+1+n])
	r.i = j + 1 + n
	return text{s: s, refs: r.sym.find(s)}
}

// entry reads one key and its value (a deletion in a delta).
func (r *reader) entry(delta bool) ksValue {
	v := ksValue{key: r.str()}
	if r.bad != "" {
		return v
	}
	if delta && r.i < len(r.b) && r.b[r.i] == '-' {
		r.i++
		v.head, v.named = "-", len(v.key.refs) > 0
		return v
	}
	if r.i >= len(r.b) {
		r.fail("a value was expected")
		return v
	}
	l, ok := layouts()[r.b[r.i]]
	if !ok {
		r.fail("key %q holds a value of a kind it does not rename (it renames strings, hashes, lists, sets and sorted sets)", v.key.s)
		return v
	}
	start := r.i
	r.i++
	if r.i < len(r.b) && r.b[r.i] == '-' {
		r.i++
	}
	for r.i < len(r.b) && '0' <= r.b[r.i] && r.b[r.i] <= '9' {
		r.i++
	}
	if r.i >= len(r.b) || r.b[r.i] != '|' {
		r.fail("an expiry was expected")
		return v
	}
	r.i++
	v.head, v.layout = string(r.b[start:r.i]), l
	v.named = len(v.key.refs) > 0
	for r.bad == "" {
		if r.i >= len(r.b) {
			r.fail("a value runs past the end")
			return v
		}
		if r.b[r.i] == ';' {
			r.i++
			break
		}
		t := r.str()
		v.named = v.named || len(t.refs) > 0
		v.items = append(v.items, t)
		if l == layoutZSet {
			j := r.i
			for j < len(r.b) && r.b[j] != ';' {
				j++
			}
			if j == len(r.b) {
				r.fail("a score was expected")
				return v
			}
			v.scores = append(v.scores, string(r.b[r.i:j]))
			r.i = j + 1
		}
	}
	switch {
	case l == layoutString && len(v.items) != 1:
		r.fail("a string value holds %d strings", len(v.items))
	case l == layoutHash && len(v.items)%2 != 0:
		r.fail("a hash holds an odd number of strings")
	}
	return v
}

// parse reads a snapshot's encoding (delta: a delta's, in braces).
func (s *symmetry) parse(b []byte, delta bool) (*ksParsed, error) {
	p := &ksParsed{raw: append([]byte(nil), b...), delta: delta}
	r := &reader{b: b, sym: s}
	end := len(b)
	if delta {
		if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
			return nil, fmt.Errorf("explore: the symmetry reduction cannot read a pending write %q", b)
		}
		r.i, end = 1, len(b)-1
	}
	for r.i < end && r.bad == "" {
		v := r.entry(delta)
		p.entries = append(p.entries, v)
		p.named = p.named || v.named
		p.keyRefs = p.keyRefs || len(v.key.refs) > 0
	}
	if r.bad != "" || r.i != end {
		r.fail("the encoding has more than it reads")
		return nil, fmt.Errorf("explore: the symmetry reduction cannot read the keyspace: %s", r.bad)
	}
	return p, nil
}

// find lists where the symmetric actors' names stand in str as words.
func (s *symmetry) find(str string) []nameRef {
	var refs []nameRef
	for i := 0; i < len(str); {
		if !identChar(str[i]) {
			i++
			continue
		}
		j := i
		for j < len(str) && identChar(str[j]) {
			j++
		}
		if a, ok := s.byName[str[i:j]]; ok {
			refs = append(refs, nameRef{int32(i), int32(j), int32(a)})
		}
		i = j
	}
	return refs
}

// renamed returns t with each name replaced by the name of the actor perm
// sends its actor to.
func (s *symmetry) renamed(t text, perm []int32) string {
	if len(t.refs) == 0 {
		return t.s
	}
	return string(s.appendRenamed(nil, t, perm))
}

func (s *symmetry) appendRenamed(b []byte, t text, perm []int32) []byte {
	last := int32(0)
	for _, ref := range t.refs {
		b = append(b, t.s[last:ref.at]...)
		b = append(b, s.names[perm[ref.actor]]...)
		last = ref.end
	}
	return append(b, t.s[last:]...)
}

// appendStr appends t renamed, length-prefixed as the encoding has it.
func (s *symmetry) appendStr(b []byte, t text, perm []int32) []byte {
	n := len(t.s)
	for _, ref := range t.refs {
		n += len(s.names[perm[ref.actor]]) - int(ref.end-ref.at)
	}
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, ':')
	return s.appendRenamed(b, t, perm)
}

// appendParsed appends p's encoding with the names renamed by perm.
func (s *symmetry) appendParsed(b []byte, p *ksParsed, perm []int32) []byte {
	if !p.named {
		return append(b, p.raw...)
	}
	if p.delta {
		b = append(b, '{')
	}
	order := s.entryBuf[:0]
	for i := range p.entries {
		order = append(order, &p.entries[i])
	}
	if p.keyRefs {
		keys := make(map[*ksValue]string, len(order))
		for _, v := range order {
			keys[v] = s.renamed(v.key, perm)
		}
		sort.SliceStable(order, func(i, j int) bool { return keys[order[i]] < keys[order[j]] })
	}
	for _, v := range order {
		b = s.appendStr(b, v.key, perm)
		b = append(b, v.head...)
		if v.layout == layoutDeleted {
			continue
		}
		if !v.named {
			for i, t := range v.items {
				b = s.appendStr(b, t, perm)
				if v.layout == layoutZSet {
					b = append(b, v.scores[i]...)
					b = append(b, ';')
				}
			}
			b = append(b, ';')
			continue
		}
		switch v.layout {
		case layoutZSet:
			type member struct {
				name, score string
				f           float64
			}
			ms := make([]member, len(v.items))
			for i, t := range v.items {
				bits, _ := strconv.ParseUint(v.scores[i], 16, 64)
				ms[i] = member{s.renamed(t, perm), v.scores[i], math.Float64frombits(bits)}
			}
			sort.Slice(ms, func(i, j int) bool {
				if ms[i].f != ms[j].f {
					return ms[i].f < ms[j].f
				}
				return ms[i].name < ms[j].name
			})
			for _, m := range ms {
				b = strconv.AppendInt(b, int64(len(m.name)), 10)
				b = append(b, ':')
				b = append(b, m.name...)
				b = append(b, m.score...)
				b = append(b, ';')
			}
		case layoutSet:
			ms := make([]string, len(v.items))
			for i, t := range v.items {
				ms[i] = s.renamed(t, perm)
			}
			sort.Strings(ms)
			for _, m := range ms {
				b = strconv.AppendInt(b, int64(len(m)), 10)
				b = append(b, ':')
				b = append(b, m...)
			}
		default: // strings, hashes and lists keep their order
			for _, t := range v.items {
				b = s.appendStr(b, t, perm)
			}
		}
		b = append(b, ';')
	}
	s.entryBuf = order[:0]
	if p.delta {
		b = append(b, '}')
	}
	return b
}
