package locks

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"
	"unicode/utf8"
)

// marshalled is a Lease's portable form.
type marshalled struct {
	Name       string `json:"name,omitempty"`
	NameBase64 string `json:"name_b64,omitempty"` // for names that are not valid UTF-8, which JSON cannot carry
	Owner      string `json:"owner"`
	Token      int64  `json:"token"`
	TTLMillis  int64  `json:"ttl_ms"`
	Fair       bool   `json:"fair,omitempty"`
	Kind       string `json:"kind,omitempty"`    // "read", "write" (RWMutex), "permits" (Semaphore) or "quorum"
	Count      int    `json:"permits,omitempty"` // permits held, for a Semaphore lease
	// Attempt is the id of the call that took a Mutex hold, which the server
	// tells apart from other calls of the same owner (empty for a reentrant
	// owner, and in leases marshalled before it existed).
	Attempt string `json:"attempt,omitempty"`
}

// Marshal returns the lease as a string that another process can pass to
// Client.Resume to extend or release the lock. Any lock name survives the
// trip, including bytes that are not UTF-8.
func (l *Lease) Marshal() (string, error) {
	m := marshalled{Owner: l.owner, Token: l.token, TTLMillis: l.s.ttl.Milliseconds(), Fair: l.s.fair, Kind: l.hold.kind(), Count: l.count}
	switch h := l.hold.(type) {
	case mutexHold:
		m.Attempt = h.attempt
	case quorumHold:
		m.Attempt = h.attempt
	}
	if utf8.ValidString(l.k.name) {
		m.Name = l.k.name
	} else {
		m.NameBase64 = base64.StdEncoding.EncodeToString([]byte(l.k.name))
	}
	b, err := json.Marshal(m)
	return string(b), err
}

// maxTTLMillis keeps a resumed TTL inside time.Duration.
const maxTTLMillis = math.MaxInt64 / int64(time.Millisecond)

// Resume rebuilds a lease marshalled by Lease.Marshal, possibly in another
// process, so it can be extended or released. The resumed lease has no
// watchdog; its local deadline counts from now, so Done may close late:
// call Extend to confirm ownership. Until a server has confirmed it, an
// Extend or Unlock that finds the owner not holding the lock returns
// ErrNotHeld (nothing shows the owner ever held it), unless the owner token
// holds the lock through another call, which means this hold ran out:
// ErrLockLost. A string that is not a marshalled lease
// is an error (it does not match ErrNotHeld: nothing was asked of the server).
// A quorum Mutex's lease resumes on a quorum Client over the same servers
// (NewQuorum, in the same order), and any other lease on a Client of its
// one server; the other way round is an error.
func (c *Client) Resume(s string) (*Lease, error) {
	const how = "; pass the string Lease.Marshal returned"
	var m marshalled
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, fmt.Errorf("locks: Resume: not a marshalled lease (%v)%s", err, how)
	}
	name := m.Name
	if m.NameBase64 != "" {
		b, err := base64.StdEncoding.DecodeString(m.NameBase64)
		if err != nil || m.Name != "" {
			return nil, fmt.Errorf("locks: Resume: a malformed name_b64 field%s", how)
		}
		name = string(b)
	}
	k, err := keysFor(name)
	if err != nil {
		return nil, fmt.Errorf("locks: Resume: %w", err)
	}
	var problems []error
	if ownerToken(m.Owner) == "" {
		// An owner that is only a call's id (see RWMutex.holder) has no token.
		problems = append(problems, fmt.Errorf("no owner token in owner %q", m.Owner))
	}
	if m.TTLMillis < MinTTL.Milliseconds() || m.TTLMillis > maxTTLMillis {
		problems = append(problems, fmt.Errorf("ttl_ms %d is outside %d..%d", m.TTLMillis, MinTTL.Milliseconds(), maxTTLMillis))
	}
	if m.Token < 1 {
		problems = append(problems, fmt.Errorf("token %d is not positive", m.Token))
	}
	var hold holdKind = mutexHold{attempt: m.Attempt}
	switch m.Kind {
	case "":
	case "quorum":
		hold = quorumHold{attempt: m.Attempt}
	case "read":
		hold = readHold{}
	case "write":
		hold = writeHold{}
	case "permits":
		hold = permitHold{}
		if m.Count < 1 {
			problems = append(problems, fmt.Errorf("a semaphore lease with %d permits", m.Count))
		}
	default:
		problems = append(problems, fmt.Errorf("unknown lease kind %q", m.Kind))
	}
	// A quorum lease lives on every server of its quorum, any other on one
	// server: resumed on the other kind of Client, its Extend and Unlock
	// would reach the wrong servers.
	switch quorumLease := m.Kind == "quorum"; {
	case quorumLease && !c.quorum():
		problems = append(problems, errors.New("a quorum lease needs a quorum Client over the same servers (NewQuorum)"))
	case !quorumLease && c.quorum():
		problems = append(problems, errors.New("a quorum Client resumes only quorum leases; resume this one on a Client of its server (New)"))
	}
	if m.Kind != "" && m.Kind != "quorum" && m.Attempt != "" {
		problems = append(problems, fmt.Errorf("attempt %q on a %q lease (only a Mutex lease has one)", m.Attempt, m.Kind))
	}
	if m.Kind != "permits" && m.Count != 0 {
		problems = append(problems, fmt.Errorf("permits %d on a %q lease", m.Count, m.Kind))
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("locks: Resume: %w%s", errors.Join(problems...), how)
	}
	st := c.defaults
	st.ttl = time.Duration(m.TTLMillis) * time.Millisecond
	st.fair = m.Fair
	st.watchdog = false
	return newResumedLease(c, &k, &st, hold, m.Owner, m.Token, m.Count, c.clock.Now(), st.ttl), nil
}
