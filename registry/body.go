package registry

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/redlua/redlua/internal/luasyntax"
)

// body judges the Lua syntax with the same strict Lua 5.1 parser lint uses
// (so Lua 5.2+ constructs such as goto, which Redis refuses to compile, fail
// here with lint's wording and position) and every literal KEYS[i] and
// ARGV[i] index against the counts the header declares.
func (p *parser) body(s *Script) {
	f, synErr := luasyntax.Parse(s.File, []byte(s.Source))
	if synErr != nil {
		e := p.errorf(synErr.Pos.Line, PartSyntax, "%s", synErr.Msg)
		e.Column = synErr.Pos.Col
		return
	}
	for _, n := range f.NewSyntax() {
		e := p.errorf(n.Pos.Line, PartSyntax, "%s", n.Message())
		e.Column = n.Pos.Col
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
