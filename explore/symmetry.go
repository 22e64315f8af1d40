package explore

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/redlua/redlua/simulate"
)

// Symmetry reduction (Model.Symmetric).
//
// States that differ only by a permutation of interchangeable actors have
// the same future up to that permutation, and satisfy the same (symmetric)
// properties. The memoisation key of a state is then the key of one chosen
// member of its class: the actors of each group sorted by their position,
// budget, belief and variables, ties broken by the smallest keyspace
// encoding, and every occurrence of a symmetric actor's name in the
// keyspace (key names, hash fields and values, set and sorted-set members,
// list elements, strings, pending replication) renamed to the name of the
// slot its actor moves to. The explored nodes stay the concrete states the
// moves reached, so traces replay as they are.
//
// A name occurs where it stands as a whole word: a maximal run of letters,
// digits and underscores equal to the name ("a" in "p:a", "client-a" or
// "a\t17", not in "semaphore"). That is why symmetric actors' names are
// such runs themselves.

// symmetry is a model's Symmetric groups, compiled.
type symmetry struct {
	groups  [][]int        // actor indices of each group, in declaration order
	byName  map[string]int // a symmetric actor's name -> its index
	names   []string       // actor index -> name
	nActors int
	order   int // how many permutations the groups allow

	// An engine's caches and scratch space (newEngine gives each engine
	// its own copy).
	parsed   map[*simulate.Snapshot]*ksParsed
	recs     [][]byte // actor index -> its record in the key
	recBuf   []byte
	perm     []int32 // actor index -> the slot it moves to
	parts    []*ksParsed
	best     []byte
	cand     []byte
	entryBuf []*ksValue
	encBuf   []byte
	class    int // the size of the class of the state symKey keyed last
}

// identChar reports whether c may be part of a name's word.
func identChar(c byte) bool {
	return c == '_' || ('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

// compileSymmetry checks m.Symmetric against the compiled actors.
func compileSymmetry(m *Model, actors []compiledActor) (*symmetry, error) {
	if len(m.Symmetric) == 0 {
		return nil, nil
	}
	s := &symmetry{byName: map[string]int{}, nActors: len(actors), order: 1}
	index := map[string]int{}
	for i := range actors {
		index[actors[i].Name] = i
		s.names = append(s.names, actors[i].Name)
	}
	for gi, group := range m.Symmetric {
		if len(group) < 2 {
			return nil, fmt.Errorf("explore: model %q: Symmetric group %d names %d actor(s); a group lists at least two interchangeable actors", m.Name, gi+1, len(group))
		}
		var g []int
		for _, name := range group {
			i, ok := index[name]
			switch {
			case !ok:
				return nil, fmt.Errorf("explore: model %q: Symmetric group %d names %q, which is not one of the model's actors (progress clients cannot be symmetric)", m.Name, gi+1, name)
			case strings.IndexFunc(name, func(r rune) bool { return r > 127 || !identChar(byte(r)) }) >= 0:
				return nil, fmt.Errorf("explore: model %q: symmetric actor %q: name symmetric actors with letters, digits and underscores only, so that their names stand out as words in the keyspace", m.Name, name)
			}
			if _, dup := s.byName[name]; dup {
				return nil, fmt.Errorf("explore: model %q: actor %q is in two Symmetric groups (or twice in one); list each actor once", m.Name, name)
			}
			s.byName[name] = i
			g = append(g, i)
		}
		sort.Ints(g)
		first := &actors[g[0]]
		for _, i := range g[1:] {
			if err := sameShape(first, &actors[i]); err != nil {
				return nil, fmt.Errorf("explore: model %q: symmetric actors %q and %q %v; actors of one group run the same program but for their names", m.Name, first.Name, actors[i].Name, err)
			}
		}
		s.groups = append(s.groups, g)
		s.order *= factorial(len(g))
	}
	return s, nil
}

// sameShape checks what can be checked of two programs being the same:
// their labels and variables.
func sameShape(a, b *compiledActor) error {
	if len(a.Steps) != len(b.Steps) {
		return fmt.Errorf("have %d and %d steps", len(a.Steps), len(b.Steps))
	}
	for i := range a.names {
		if a.names[i] != b.names[i] {
			return fmt.Errorf("label step %d %q and %q", i+1, a.names[i], b.names[i])
		}
	}
	if strings.Join(a.Vars, " ") != strings.Join(b.Vars, " ") {
		return fmt.Errorf("declare the variables %q and %q", a.Vars, b.Vars)
	}
	return nil
}

// generators returns one permutation per pair of neighbours in each
// group (actor index -> index it trades places with); together they
// generate every permutation the groups allow.
func (s *symmetry) generators() [][]int32 {
	var out [][]int32
	for _, g := range s.groups {
		for j := 0; j+1 < len(g); j++ {
			p := identity(s.nActors)
			p[g[j]], p[g[j+1]] = int32(g[j+1]), int32(g[j])
			out = append(out, p)
		}
	}
	return out
}

func identity(n int) []int32 {
	p := make([]int32, n)
	for i := range p {
		p[i] = int32(i)
	}
	return p
}

// maxParsed bounds the cache of keyspaces read for renaming; past it the
// cache starts again.
const maxParsed = 1 << 14

// engineCopy returns s with caches and scratch space of its own.
func (s *symmetry) engineCopy() *symmetry {
	if s == nil {
		return nil
	}
	return &symmetry{groups: s.groups, byName: s.byName, names: s.names, nActors: s.nActors, order: s.order,
		parsed: map[*simulate.Snapshot]*ksParsed{}}
}

// readSnapshot returns sn's keyspace (without the Unobserved keys) read
// for renaming. What it cannot read is remembered too.
func (e *engine) readSnapshot(sn *simulate.Snapshot) (*ksParsed, error) {
	s := e.sym
	p, ok := s.parsed[sn]
	if !ok {
		s.encBuf = sn.AppendCanonicalWithout(s.encBuf[:0], e.r.Unobserved)
		var err error
		if p, err = s.parse(s.encBuf, false); err != nil {
			p = &ksParsed{err: err}
		}
		if len(s.parsed) >= maxParsed {
			clear(s.parsed)
		}
		s.parsed[sn] = p
	}
	if p.err != nil {
		return nil, p.err
	}
	return p, nil
}

// readKeyspaces fills s.parts with n's keyspaces and pending writes, read
// for renaming, and reports whether a symmetric actor's name stands in
// any of them.
func (e *engine) readKeyspaces(n *node) (named bool, err error) {
	s := e.sym
	s.parts = s.parts[:0]
	p, err := e.readSnapshot(n.primary)
	if err != nil {
		return false, err
	}
	s.parts = append(s.parts, p)
	if n.replica != nil {
		if p, err = e.readSnapshot(n.replica); err != nil {
			return false, err
		}
		s.parts = append(s.parts, p)
		for _, d := range n.pending {
			if p, err = s.parse(d.AppendCanonical(nil), true); err != nil {
				return false, err
			}
			s.parts = append(s.parts, p)
		}
	}
	for _, p := range s.parts {
		named = named || p.named
	}
	return named, nil
}

// permKey appends the key of the state n becomes when each actor i takes
// the place (and the name) of actor perm[i]; s.parts must hold n's
// keyspaces (readKeyspaces). With the identity it is rawKey's encoding.
func (e *engine) permKey(b []byte, n *node, perm []int32) []byte {
	s := e.sym
	b = appendHeader(b, n)
	for slot := range n.actors {
		for i := range n.actors {
			if int(perm[i]) == slot {
				b = appendActor(b, &n.actors[i])
				break
			}
		}
	}
	b = append(b, '#')
	b = s.appendParsed(b, s.parts[0], perm)
	if n.replica != nil {
		b = append(b, '#')
		for _, p := range s.parts[1:] {
			b = s.appendParsed(b, p, perm)
		}
	}
	return b
}

// tie is actors of one group whose records are equal: any assignment of
// them to slots gives the same actor records.
type tie struct {
	actors []int
	slots  []int
}

// symKey returns the key of the chosen state of n's class: each group's
// actors sorted by their records into the group's slots, and among the
// orders of equal records the one with the smallest keyspace encoding.
// It reports false when the keyspace holds what it cannot rename (the
// caller then keys n as it is, which is sound: only less is merged).
func (e *engine) symKey(n *node) ([]byte, bool) {
	s := e.sym
	named, err := e.readKeyspaces(n)
	if err != nil {
		return nil, false
	}
	s.recBuf = s.recBuf[:0]
	ends := make([]int, len(n.actors))
	for i := range n.actors {
		s.recBuf = appendActor(s.recBuf, &n.actors[i])
		ends[i] = len(s.recBuf)
	}
	s.recs = s.recs[:0]
	for i, end := range ends {
		start := 0
		if i > 0 {
			start = ends[i-1]
		}
		s.recs = append(s.recs, s.recBuf[start:end])
	}
	if cap(s.perm) < len(n.actors) {
		s.perm = make([]int32, len(n.actors))
	}
	perm := s.perm[:len(n.actors)]
	for i := range perm {
		perm[i] = int32(i)
	}
	var ties []tie
	for _, g := range s.groups {
		order := append([]int(nil), g...)
		sort.SliceStable(order, func(i, j int) bool { return bytes.Compare(s.recs[order[i]], s.recs[order[j]]) < 0 })
		for j, a := range order {
			perm[a] = int32(g[j])
		}
		for lo := 0; lo < len(order); {
			hi := lo + 1
			for hi < len(order) && bytes.Equal(s.recs[order[lo]], s.recs[order[hi]]) {
				hi++
			}
			if hi-lo > 1 {
				ties = append(ties, tie{actors: order[lo:hi], slots: g[lo:hi]})
			}
			lo = hi
		}
	}
	// The class has order/stabiliser states: the permutations that leave
	// n as it is are those within ties that give the chosen key again
	// (every one of them when no name stands in the keyspace).
	if !named || len(ties) == 0 {
		stab := 1
		if !named {
			for _, t := range ties {
				stab *= factorial(len(t.actors))
			}
		}
		s.class = s.order / stab
		e.buf = e.permKey(e.buf[:0], n, perm)
		return e.buf, true
	}
	found, stab := false, 0
	var visit func(t int)
	visit = func(t int) {
		if t == len(ties) {
			s.cand = e.permKey(s.cand[:0], n, perm)
			switch c := bytes.Compare(s.cand, s.best); {
			case !found || c < 0:
				s.best, s.cand, found, stab = s.cand, s.best, true, 1
			case c == 0:
				stab++
			}
			return
		}
		acts := append([]int(nil), ties[t].actors...)
		slots := ties[t].slots
		// Heap's algorithm: every order of acts, one swap apart.
		var heap func(k int)
		heap = func(k int) {
			if k <= 1 {
				for j, a := range acts {
					perm[a] = int32(slots[j])
				}
				visit(t + 1)
				return
			}
			for i := 0; i < k-1; i++ {
				heap(k - 1)
				if k%2 == 0 {
					acts[i], acts[k-1] = acts[k-1], acts[i]
				} else {
					acts[0], acts[k-1] = acts[k-1], acts[0]
				}
			}
			heap(k - 1)
		}
		heap(len(acts))
	}
	visit(0)
	s.class = s.order / stab
	e.buf = append(e.buf[:0], s.best...)
	return e.buf, true
}

func factorial(n int) int {
	f := 1
	for i := 2; i <= n; i++ {
		f *= i
	}
	return f
}

// checkSymmetricStart refuses a start that tells symmetric actors apart:
// Setup's keyspace naming one of them. (A keyspace it cannot read is
// never merged with another, so there is nothing to refuse.)
func (e *engine) checkSymmetricStart(root *node) error {
	if _, err := e.readKeyspaces(root); err != nil {
		return nil
	}
	id := identity(len(root.actors))
	want := string(e.permKey(nil, root, id))
	for _, g := range e.sym.generators() {
		if string(e.permKey(nil, root, g)) != want {
			a, b := e.swapped(g)
			return fmt.Errorf("explore: model %q: the keyspace Setup leaves tells the symmetric actors %q and %q apart (one of their names stands in it as a word); symmetric actors must be interchangeable from the start: rename the actors or the data", e.r.Name, a, b)
		}
	}
	return nil
}

// swapped names the two actors a generator trades.
func (e *engine) swapped(g []int32) (string, string) {
	for i, j := range g {
		if int(j) != i {
			return e.sym.names[i], e.sym.names[j]
		}
	}
	return "", ""
}
