package lint

import "github.com/redlua/redlua/internal/luasyntax"

// The syntax tree lint's analyzers walk is internal/luasyntax's, the same
// parser the registry judges scripts with; these aliases keep lint's own
// names for it.
type (
	Node              = luasyntax.Node
	Expr              = luasyntax.Expr
	Stmt              = luasyntax.Stmt
	Pos               = luasyntax.Pos
	Comment           = luasyntax.Comment
	File              = luasyntax.File
	Block             = luasyntax.Block
	TableItem         = luasyntax.TableItem
	NilExpr           = luasyntax.NilExpr
	TrueExpr          = luasyntax.TrueExpr
	FalseExpr         = luasyntax.FalseExpr
	VarargExpr        = luasyntax.VarargExpr
	NumberExpr        = luasyntax.NumberExpr
	StringExpr        = luasyntax.StringExpr
	NameExpr          = luasyntax.NameExpr
	IndexExpr         = luasyntax.IndexExpr
	CallExpr          = luasyntax.CallExpr
	MethodCallExpr    = luasyntax.MethodCallExpr
	FunctionExpr      = luasyntax.FunctionExpr
	TableExpr         = luasyntax.TableExpr
	BinaryExpr        = luasyntax.BinaryExpr
	UnaryExpr         = luasyntax.UnaryExpr
	ParenExpr         = luasyntax.ParenExpr
	LocalStmt         = luasyntax.LocalStmt
	AssignStmt        = luasyntax.AssignStmt
	CallStmt          = luasyntax.CallStmt
	DoStmt            = luasyntax.DoStmt
	WhileStmt         = luasyntax.WhileStmt
	RepeatStmt        = luasyntax.RepeatStmt
	IfStmt            = luasyntax.IfStmt
	NumForStmt        = luasyntax.NumForStmt
	GenForStmt        = luasyntax.GenForStmt
	FunctionStmt      = luasyntax.FunctionStmt
	LocalFunctionStmt = luasyntax.LocalFunctionStmt
	ReturnStmt        = luasyntax.ReturnStmt
	BreakStmt         = luasyntax.BreakStmt
	GotoStmt          = luasyntax.GotoStmt
	LabelStmt         = luasyntax.LabelStmt
	EmptyStmt         = luasyntax.EmptyStmt

	span = luasyntax.Span
)

// Parse parses Lua source with the strict Lua 5.1 parser. The error, if
// any, is the first syntax error (luacheck's E011), as a Diagnostic.
func Parse(name string, src []byte) (*File, *Diagnostic) {
	f, err := luasyntax.Parse(name, src)
	if err != nil {
		return nil, syntaxDiagnostic(err)
	}
	return f, nil
}

func syntaxDiagnostic(e *luasyntax.SyntaxError) *Diagnostic {
	return &Diagnostic{
		File: e.File, Line: e.Pos.Line, Column: e.Pos.Col, EndColumn: e.EndColumn,
		Code: "E011", Analyzer: "syntax", Message: e.Msg, Severity: Error,
	}
}

func spanAt(pos Pos, end int) span { return span{Pos: pos, End: end} }
