package simulate

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// scriptCommand runs the scripting commands a client may send (EVAL,
// EVALSHA, their _RO forms and SCRIPT LOAD/EXISTS/FLUSH) through the
// sandbox. ok is false for every other command. The caller holds s.mu.
func (s *Server) scriptCommand(ctx context.Context, argv []string, pubs *[]publication) (reply Reply, err error, ok bool) {
	if r, err, ok := s.functionCommand(ctx, argv, pubs); ok {
		return r, err, true
	}
	name := strings.ToLower(argv[0])
	switch name {
	case "eval", "eval_ro", "evalsha", "evalsha_ro":
		if len(argv) < 3 {
			return errorReply(fmt.Sprintf(errWrongArgs, name)), nil, true
		}
		numkeys, perr := strconv.ParseInt(argv[2], 10, 64)
		switch {
		case perr != nil:
			return errorReply(errNotInteger), nil, true
		case numkeys > int64(len(argv)-3):
			return errorReply(errNumKeysTooMany), nil, true
		case numkeys < 0:
			return errorReply(errNumKeysNegative), nil, true
		}
		keys, args := argv[3:3+numkeys], argv[3+numkeys:]
		var c *compiled
		if strings.HasPrefix(name, "evalsha") {
			c = s.scripts[strings.ToLower(argv[1])]
			if c == nil {
				return errorReply(errNoSuchScript), nil, true
			}
		} else {
			var errText string
			if c, errText = s.compile(argv[1], sha1Hex(argv[1])); errText != "" {
				return errorReply(errText), nil, true
			}
		}
		ro := strings.HasSuffix(name, "_ro")
		if ro && c.flags.shebang && !c.flags.noWrites {
			return errorReply(errROWriteScript), nil, true
		}
		r, p, err := s.runLocked(ctx, c, c.sha, keys, args, ro)
		*pubs = append(*pubs, p...)
		return r, err, true
	case "script":
		if len(argv) < 2 {
			return errorReply(fmt.Sprintf(errWrongArgs, "script")), nil, true
		}
		switch sub := strings.ToLower(argv[1]); {
		case sub == "load" && len(argv) == 3:
			sha := sha1Hex(argv[2])
			if _, errText := s.compile(argv[2], sha); errText != "" {
				return errorReply(errText), nil, true
			}
			return Reply{Kind: KindBulk, Str: sha}, nil, true
		case sub == "exists" && len(argv) >= 3:
			out := make([]Reply, 0, len(argv)-2)
			for _, sha := range argv[2:] {
				_, found := s.scripts[strings.ToLower(sha)]
				out = append(out, Reply{Kind: KindInt, Int: boolInt(found)})
			}
			return Reply{Kind: KindArray, Elems: out}, nil, true
		case sub == "flush" && len(argv) <= 3:
			// Redis makes a new Lua interpreter: its call limits start
			// afresh too (growCI).
			s.scripts = map[string]*compiled{}
			s.sb = nil
			return Reply{Kind: KindStatus, Str: "OK"}, nil, true
		}
	}
	return Reply{}, nil, false
}
