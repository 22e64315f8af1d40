package simulate

// ReplyKind is the RESP type of a Reply.
type ReplyKind uint8

// Reply kinds. Commands build RESP3-rich replies; Downgrade turns them into
// what a RESP2 client (or a script before redis.setresp(3)) sees.
const (
	KindNil       ReplyKind = iota // RESP2 null bulk and null array; RESP3 null
	KindStatus                     // simple string, Str holds it
	KindError                      // error, Str holds the full text including the code ("ERR ...", "WRONGTYPE ...")
	KindInt                        // integer, Int holds it
	KindBulk                       // bulk string, Str holds it
	KindArray                      // array, Elems holds it
	KindMap                        // RESP3 map, Elems holds k1, v1, k2, v2, ...
	KindSet                        // RESP3 set, Elems holds it
	KindDouble                     // RESP3 double, Float holds it
	KindBool                       // RESP3 boolean, Int is 1 or 0
	KindBigNumber                  // RESP3 big number, Str holds its digits
	KindVerbatim                   // RESP3 verbatim string, Str holds the text (format "txt")
)

// Reply is one RESP value, the result of a command or of a script.
type Reply struct {
	Kind  ReplyKind
	Str   string
	Int   int64
	Float float64
	Elems []Reply
}
