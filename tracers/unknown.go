package tracers

// Field names one value of Stats or Event that a mechanism may be unable
// to observe (see Capabilities.Blind).
type Field uint16

// The fields of Stats and Event that can be unknown.
const (
	FieldCalls     Field = 1 << iota // Stats.Calls
	FieldSlow                        // Stats.Slow
	FieldErrors                      // Stats.Errors
	FieldDropped                     // Stats.Dropped
	FieldMissed                      // Stats.Missed
	FieldPending                     // Stats.Pending
	FieldTGID                        // Event.TGID
	FieldRequested                   // Event.Requested
	FieldResult                      // Event.Result
	FieldLost                        // Stats.Lost
)

var fieldNames = []string{
	"calls", "slow", "errors", "dropped", "missed", "pending", "tgid", "requested", "result", "lost",
}

// Fields is a set of Field; the zero value is the empty set.
type Fields = Field

// Has reports whether every field of f is in the set.
func (s Field) Has(f Field) bool { return s&f == f }

// String lists the set's fields by name, e.g. "calls,errors"; "none" for
// the empty set.
func (s Field) String() string { return setString(uint64(s), fieldNames) }
