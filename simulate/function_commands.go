package simulate

import (
	"context"
	"fmt"
	"strings"

	"github.com/redlua/redlua/internal/cmdtable"
)

// functionCommand runs FCALL, FCALL_RO and FUNCTION's subcommands; ok is
// false for every other command. The caller holds s.mu.
func (s *Server) functionCommand(ctx context.Context, argv []string, pubs *[]publication) (reply Reply, err error, ok bool) {
	switch name := strings.ToLower(argv[0]); name {
	case "fcall", "fcall_ro":
		if len(argv) < 3 {
			return errorReply(fmt.Sprintf(errWrongArgs, name)), nil, true
		}
		r, p, err := s.fcall(ctx, argv, name == "fcall_ro")
		*pubs = append(*pubs, p...)
		return r, err, true
	case "function":
		return s.functionSubcommand(ctx, argv), nil, true
	}
	return Reply{}, nil, false
}

// fcall is FCALL / FCALL_RO function numkeys key... arg...
func (s *Server) fcall(ctx context.Context, argv []string, ro bool) (Reply, []publication, error) {
	f := s.functions.funcs[strings.ToLower(argv[1])]
	if f == nil {
		return errorReply(errFunctionNotFound), nil, nil
	}
	numkeys, ok := parseInt(argv[2])
	switch {
	case !ok:
		return errorReply(errBadNumKeys), nil, nil
	case numkeys > int64(len(argv)-3):
		return errorReply(errNumKeysTooMany), nil, nil
	case numkeys < 0:
		return errorReply(errNumKeysNegative), nil, nil
	}
	if ro && !f.noWrites {
		return errorReply(errROWriteScript), nil, nil
	}
	keys, args := argv[3:3+numkeys], argv[3+numkeys:]
	return s.invokeLocked(ctx, invocation{
		sb: s.functions.eng.sb, fn: f.fn, id: f.name, sha: f.name, errName: f.name, params: true,
		readOnly: f.noWrites || ro, allowCrossSlot: f.crossSlot,
	}, keys, args)
}

// functionSubcommand is FUNCTION LOAD/DELETE/LIST/FLUSH/DUMP/RESTORE.
func (s *Server) functionSubcommand(ctx context.Context, argv []string) Reply {
	if len(argv) < 2 {
		return errorReply(fmt.Sprintf(errWrongArgs, "function"))
	}
	sub := strings.ToLower(argv[1])
	meta, known := cmdtable.LookupSub("function", sub)
	if !known {
		return errorReply(fmt.Sprintf(errUnknownSubcommand, argv[1], "FUNCTION"))
	}
	if !meta.ArityOK(len(argv)) {
		return errorReply(fmt.Sprintf(errWrongArgs, "function|"+sub))
	}
	fs := s.functions
	switch sub {
	case "load":
		return s.functionLoad(ctx, argv)
	case "delete":
		lib := fs.libs[argv[2]]
		if lib == nil {
			return errorReply(errLibraryNotFound)
		}
		fs.unlink(lib)
		return okReply()
	case "flush":
		if len(argv) > 3 {
			return errorReply(fmt.Sprintf(errSubcommandSyntax, argv[1], "FUNCTION"))
		}
		if len(argv) == 3 && !strings.EqualFold(argv[2], "sync") && !strings.EqualFold(argv[2], "async") {
			return errorReply(errFlushOption)
		}
		s.functions = newFunctionStore()
		return okReply()
	case "list":
		return s.functionList(argv)
	case "dump":
		return bulkReply(dumpFunctions(fs.sortedLibraries(), s.profile.facts().rdbVersion))
	case "restore":
		return s.functionRestore(ctx, argv)
	}
	return errorReply(fmt.Sprintf(errNotImplemented, "function|"+sub))
}

// functionLoad is FUNCTION LOAD [REPLACE] code.
func (s *Server) functionLoad(ctx context.Context, argv []string) Reply {
	replace, i := false, 2
	for ; i < len(argv)-1; i++ {
		if !strings.EqualFold(argv[i], "replace") {
			return errorReply(fmt.Sprintf(errLoadUnknownOption, argv[i]))
		}
		replace = true
	}
	if i >= len(argv) {
		return errorReply(errLoadNoCode)
	}
	name, errText := s.loadLibrary(ctx, argv[i], replace)
	if errText != "" {
		return errorReply(errText)
	}
	return bulkReply(name)
}

// functionList is FUNCTION LIST [WITHCODE] [LIBRARYNAME pattern]; the
// pattern matches library names without case.
func (s *Server) functionList(argv []string) Reply {
	withCode, pattern, havePattern := false, "", false
	for i := 2; i < len(argv); i++ {
		switch {
		case !withCode && strings.EqualFold(argv[i], "withcode"):
			withCode = true
		case !havePattern && strings.EqualFold(argv[i], "libraryname"):
			if i >= len(argv)-1 {
				return errorReply(errListNoLibraryName)
			}
			i++
			pattern, havePattern = argv[i], true
		default:
			return errorReply(fmt.Sprintf(errListUnknownArg, argv[i]))
		}
	}
	out := []Reply{}
	for _, lib := range s.functions.sortedLibraries() {
		if havePattern && !globMatch(strings.ToLower(pattern), strings.ToLower(lib.name)) {
			continue
		}
		funcs := make([]Reply, 0, len(lib.funcs))
		for _, f := range lib.funcs {
			desc := nilReply()
			if f.description != nil {
				desc = bulkReply(*f.description)
			}
			flags := make([]Reply, len(f.flags))
			for i, fl := range f.flags {
				flags[i] = statusReply(fl)
			}
			funcs = append(funcs, Reply{Kind: KindMap, Elems: []Reply{
				bulkReply("name"), bulkReply(f.name),
				bulkReply("description"), desc,
				bulkReply("flags"), {Kind: KindSet, Elems: flags},
			}})
		}
		entry := []Reply{
			bulkReply("library_name"), bulkReply(lib.name),
			bulkReply("engine"), bulkReply("LUA"),
			bulkReply("functions"), arrayReply(funcs),
		}
		if withCode {
			entry = append(entry, bulkReply("library_code"), bulkReply(lib.code))
		}
		out = append(out, Reply{Kind: KindMap, Elems: entry})
	}
	return arrayReply(out)
}

// functionRestore is FUNCTION RESTORE payload [FLUSH|APPEND|REPLACE].
func (s *Server) functionRestore(ctx context.Context, argv []string) Reply {
	policy := "append"
	if len(argv) > 4 {
		return errorReply(fmt.Sprintf(errWrongArgs, "function|restore"))
	}
	if len(argv) == 4 {
		policy = strings.ToLower(argv[3])
		if policy != "flush" && policy != "append" && policy != "replace" {
			return errorReply(errRestorePolicy)
		}
	}
	codes, errText := undumpFunctions(argv[2], s.profile.facts().rdbVersion)
	if errText != "" {
		return errorReply(errText)
	}
	// Build the restored libraries apart, then merge, so a failure changes nothing.
	eng := s.functionEngine()
	saved := s.functions
	staged := newFunctionStore()
	staged.eng = eng
	s.functions = staged
	names := make([]string, 0, len(codes))
	for _, code := range codes {
		name, errText := s.loadLibrary(ctx, code, false)
		if errText != "" {
			s.functions = saved
			return errorReply(errText)
		}
		names = append(names, name)
	}
	s.functions = saved
	if policy == "flush" {
		s.functions = staged
		return okReply()
	}
	merged := newFunctionStore()
	merged.eng = eng
	for _, lib := range saved.sortedLibraries() {
		merged.link(lib, nil)
	}
	for _, name := range names { // in the payload's order, as Redis checks them
		lib := staged.libs[name]
		old := merged.libs[lib.name]
		if old != nil && policy != "replace" {
			return errorReply(fmt.Sprintf(errRestoreLibraryExists, lib.name))
		}
		if errText := merged.link(lib, old); errText != "" {
			return errorReply(errText)
		}
	}
	s.functions = merged
	return okReply()
}

// restart moves the libraries into a fresh interpreter after a Go panic
// left the old one unusable, loading each from its code again.
func (fs *functionStore) restart(s *Server) {
	libs := fs.sortedLibraries()
	s.functions = newFunctionStore()
	for _, lib := range libs {
		s.loadLibrary(context.Background(), lib.code, false)
	}
}
