package luasyntax

// The syntax tree. Nodes keep the position of their first token and the
// offset of their last byte, which is all the checks need.

// Node is any syntax tree node.
type Node interface {
	Start() Pos
	EndOffset() int
}

// Span is the source range of a node: the position of its first byte and
// the offset of its last.
type Span struct {
	Pos Pos
	End int
}

// Start is the position of the node's first byte.
func (s Span) Start() Pos { return s.Pos }

// EndOffset is the offset of the node's last byte.
func (s Span) EndOffset() int { return s.End }

func spanOf(from, to Node) Span { return Span{Pos: from.Start(), End: to.EndOffset()} }

// Expr is an expression node.
type Expr interface {
	Node
	exprNode()
}

// Stmt is a statement node.
type Stmt interface {
	Node
	stmtNode()
}

// Expressions.
type (
	NilExpr    struct{ Span }
	TrueExpr   struct{ Span }
	FalseExpr  struct{ Span }
	VarargExpr struct{ Span }
	NumberExpr struct {
		Span
		Raw string
	}
	StringExpr struct {
		Span
		Value string
	}
	// NameExpr is a variable reference; which variable it names is for
	// a resolver to decide (lint's maps each NameExpr to its local or nil
	// for a global).
	NameExpr struct {
		Span
		Name string
	}
	IndexExpr struct {
		Span
		Obj, Key Expr
	}
	CallExpr struct {
		Span
		Fn   Expr
		Args []Expr
	}
	MethodCallExpr struct {
		Span
		Obj    Expr
		Method string
		Args   []Expr
	}
	FunctionExpr struct {
		Span
		Params   []*NameExpr
		IsVararg bool
		VarargAt Span
		IsMethod bool // declared with ':' (implicit self)
		Body     *Block
	}
	TableExpr struct {
		Span
		Items []TableItem
	}
	BinaryExpr struct {
		Span
		Op   string
		L, R Expr
	}
	UnaryExpr struct {
		Span
		Op string
		X  Expr
	}
	ParenExpr struct {
		Span
		X Expr
	}
)

// TableItem is one constructor entry; Key is nil for positional items.
type TableItem struct {
	Key, Value Expr
}

func (NilExpr) exprNode()        {}
func (TrueExpr) exprNode()       {}
func (FalseExpr) exprNode()      {}
func (VarargExpr) exprNode()     {}
func (NumberExpr) exprNode()     {}
func (StringExpr) exprNode()     {}
func (NameExpr) exprNode()       {}
func (IndexExpr) exprNode()      {}
func (CallExpr) exprNode()       {}
func (MethodCallExpr) exprNode() {}
func (FunctionExpr) exprNode()   {}
func (TableExpr) exprNode()      {}
func (BinaryExpr) exprNode()     {}
func (UnaryExpr) exprNode()      {}
func (ParenExpr) exprNode()      {}

// Block is a sequence of statements; End is the position of the token that
// closes it (end, until, else, elseif or EOF).
type Block struct {
	Span
	Stmts []Stmt
}

// Statements.
type (
	LocalStmt struct {
		Span
		Names []*NameExpr
		Exprs []Expr
	}
	AssignStmt struct {
		Span
		Targets []Expr
		Exprs   []Expr
	}
	CallStmt struct {
		Span
		Call Expr
	}
	DoStmt struct {
		Span
		Body *Block
	}
	WhileStmt struct {
		Span
		Cond Expr
		Body *Block
	}
	RepeatStmt struct {
		Span
		Body *Block
		Cond Expr
	}
	IfStmt struct {
		Span
		Conds  []Expr
		Blocks []*Block
		// Heads are the "then" tokens of each branch, ElseHead the "else".
		Heads    []Span
		Else     *Block
		ElseHead Span
	}
	NumForStmt struct {
		Span
		Var               *NameExpr
		Init, Limit, Step Expr
		Body              *Block
	}
	GenForStmt struct {
		Span
		Vars  []*NameExpr
		Exprs []Expr
		Body  *Block
	}
	// FunctionStmt is "function a.b:c() end"; Target is the assigned
	// expression (a NameExpr or an IndexExpr chain).
	FunctionStmt struct {
		Span
		Target Expr
		Func   *FunctionExpr
	}
	LocalFunctionStmt struct {
		Span
		Name *NameExpr
		Func *FunctionExpr
	}
	ReturnStmt struct {
		Span
		Exprs []Expr
	}
	BreakStmt struct{ Span }
	// GotoStmt and LabelStmt are Lua 5.2 syntax, kept so the Redis check
	// can name them.
	GotoStmt struct {
		Span
		Label string
	}
	LabelStmt struct {
		Span
		Name string
	}
	EmptyStmt struct{ Span }
)

func (LocalStmt) stmtNode()         {}
func (AssignStmt) stmtNode()        {}
func (CallStmt) stmtNode()          {}
func (DoStmt) stmtNode()            {}
func (WhileStmt) stmtNode()         {}
func (RepeatStmt) stmtNode()        {}
func (IfStmt) stmtNode()            {}
func (NumForStmt) stmtNode()        {}
func (GenForStmt) stmtNode()        {}
func (FunctionStmt) stmtNode()      {}
func (LocalFunctionStmt) stmtNode() {}
func (ReturnStmt) stmtNode()        {}
func (BreakStmt) stmtNode()         {}
func (GotoStmt) stmtNode()          {}
func (LabelStmt) stmtNode()         {}
func (EmptyStmt) stmtNode()         {}
