package lint

// The syntax tree. Nodes keep the position of their first token and the
// offset of their last byte, which is all the checks need.

// Node is any syntax tree node.
type Node interface {
	Start() Pos
	EndOffset() int
}

type span struct {
	pos Pos
	end int
}

func (s span) Start() Pos       { return s.pos }
func (s span) EndOffset() int   { return s.end }
func spanOf(from, to Node) span { return span{pos: from.Start(), end: to.EndOffset()} }

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
	NilExpr    struct{ span }
	TrueExpr   struct{ span }
	FalseExpr  struct{ span }
	VarargExpr struct{ span }
	NumberExpr struct {
		span
		Raw string
	}
	StringExpr struct {
		span
		Value string
	}
	// NameExpr is a variable reference; Var is filled in by resolution
	// (nil for a global).
	NameExpr struct {
		span
		Name string
		Var  *Var
	}
	IndexExpr struct {
		span
		Obj, Key Expr
	}
	CallExpr struct {
		span
		Fn   Expr
		Args []Expr
	}
	MethodCallExpr struct {
		span
		Obj    Expr
		Method string
		Args   []Expr
	}
	FunctionExpr struct {
		span
		Params   []*NameExpr
		IsVararg bool
		VarargAt span
		IsMethod bool // declared with ':' (implicit self)
		Body     *Block
	}
	TableExpr struct {
		span
		Items []TableItem
	}
	BinaryExpr struct {
		span
		Op   string
		L, R Expr
	}
	UnaryExpr struct {
		span
		Op string
		X  Expr
	}
	ParenExpr struct {
		span
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
	span
	Stmts []Stmt
}

// Statements.
type (
	LocalStmt struct {
		span
		Names []*NameExpr
		Exprs []Expr
	}
	AssignStmt struct {
		span
		Targets []Expr
		Exprs   []Expr
	}
	CallStmt struct {
		span
		Call Expr
	}
	DoStmt struct {
		span
		Body *Block
	}
	WhileStmt struct {
		span
		Cond Expr
		Body *Block
	}
	RepeatStmt struct {
		span
		Body *Block
		Cond Expr
	}
	IfStmt struct {
		span
		Conds  []Expr
		Blocks []*Block
		// Heads are the "then" tokens of each branch, ElseHead the "else".
		Heads    []span
		Else     *Block
		ElseHead span
	}
	NumForStmt struct {
		span
		Var               *NameExpr
		Init, Limit, Step Expr
		Body              *Block
	}
	GenForStmt struct {
		span
		Vars  []*NameExpr
		Exprs []Expr
		Body  *Block
	}
	// FunctionStmt is "function a.b:c() end"; Target is the assigned
	// expression (a NameExpr or an IndexExpr chain).
	FunctionStmt struct {
		span
		Target Expr
		Func   *FunctionExpr
	}
	LocalFunctionStmt struct {
		span
		Name *NameExpr
		Func *FunctionExpr
	}
	ReturnStmt struct {
		span
		Exprs []Expr
	}
	BreakStmt struct{ span }
	// GotoStmt and LabelStmt are Lua 5.2 syntax, kept so the Redis check
	// can name them.
	GotoStmt struct {
		span
		Label string
	}
	LabelStmt struct {
		span
		Name string
	}
	EmptyStmt struct{ span }
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
