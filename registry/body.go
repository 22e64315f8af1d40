package registry

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/redlua/redlua/internal/luasyntax"
)

// body judges the Lua syntax as Redis's Lua 5.1 compiles it, and reports
// an error in Redis's words and at Redis's line ("user_script:LINE: ..."),
// so what registration says is what SCRIPT LOAD would say. Then every
// literal KEYS[i] and ARGV[i] index is checked against the counts the
// header declares.
func (p *parser) body(s *Script) {
	src := []byte(s.Source)
	f, synErr := luasyntax.Parse(s.File, src)
	if luaErr := luasyntax.CheckLua51(s.File, src); luaErr != nil {
		// Redis's error reply turns line breaks into spaces.
		msg := strings.NewReplacer("\r", " ", "\n", " ").Replace(luaErr.LuaText(redisChunkName))
		// The strict parse fails at a Lua 5.2+ construct the lenient one
		// records: name it, since Lua's words do not.
		if synErr == nil && f != nil && len(f.NewSyntax()) > 0 {
			n := f.NewSyntax()[0]
			if n.Nested {
				// Lua's words already say it; add why and the fix.
				msg += " (" + strings.TrimPrefix(n.Message(), luaErr.LuaMsg+": ") + ")"
			} else {
				msg += " (" + n.Message() + ")"
			}
		}
		e := p.errorf(luaErr.LuaLine, PartSyntax, "%s", msg)
		if luaErr.Pos.Line == luaErr.LuaLine {
			e.Column = luaErr.Pos.Col
		}
		return
	}
	if synErr != nil {
		// Redis compiles it, though luacheck's view of the syntax does
		// not (a NUL byte Lua's lexer reads as part of a numeral, say):
		// nothing to report, and no tree to check the indexes on.
		return
	}
	luasyntax.WalkAllExprs(f.Block, func(x luasyntax.Expr) bool {
		ix, ok := x.(*luasyntax.IndexExpr)
		if !ok {
			return true
		}
		obj, ok := ix.Obj.(*luasyntax.NameExpr)
		num, ok2 := ix.Key.(*luasyntax.NumberExpr)
		if !ok || !ok2 || (obj.Name != "KEYS" && obj.Name != "ARGV") {
			return true
		}
		if msg := s.IndexProblem(obj.Name, num.Raw); msg != "" {
			e := p.errorf(ix.Pos.Line, PartIndex, "%s", msg)
			e.Column = ix.Pos.Col
		}
		return true
	})
}

// redisChunkName is the chunk name Redis compiles a script under, which
// its error messages start with.
const redisChunkName = "user_script"

// IndexProblem is the one rule for a literal index of KEYS or ARGV: table
// is "KEYS" or "ARGV" and raw the numeral as written. It returns "" when
// the header declares that index (or the list is variadic), else what is
// wrong and how to fix it. The registry applies it at registration and
// lint reports it as E911/E912. A numeral Go cannot read is not judged.
func (s *Script) IndexProblem(table, raw string) string {
	if s == nil {
		return "no script to check the index against"
	}
	idx, err := strconv.ParseFloat(raw, 64)
	if err != nil {
		return ""
	}
	names, field, variadic := s.Keys, fieldKeys, s.Variadic&VariadicKeys != 0
	if table == "ARGV" {
		names, field, variadic = s.Args, fieldArgs, s.Variadic&VariadicArgs != 0
	}
	switch {
	case idx < 1 || idx != float64(int(idx)):
		return fmt.Sprintf("%s[%s] is never set: Lua tables passed by Redis start at index 1", table, raw)
	case int(idx) > len(names) && !variadic:
		declared := "none"
		if len(names) > 0 {
			declared = fmt.Sprintf("%d (%s)", len(names), strings.Join(names, ", "))
		}
		return fmt.Sprintf("%s[%d] is beyond the %s the header declares: %s; add a name to \"-- %s:\" or fix the index", table, int(idx), field, declared, field)
	}
	return ""
}
