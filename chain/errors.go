package chain

import "fmt"

// UnavailableError says why the programs could not be loaded or attached
// on this host, and what would let them.
type UnavailableError struct {
	// Reason is what failed, in the loader's words, e.g. "loading
	// program add_to_page_cache: operation not permitted".
	Reason string
	// Hint says what to do, e.g. "run as root, or grant CAP_BPF and
	// CAP_PERFMON"; may be empty.
	Hint string
	// Err is the underlying error; may be nil.
	Err error
}

// Error reads "eBPF page-cache tracing unavailable: REASON (HINT)".
func (e *UnavailableError) Error() string {
	s := "eBPF page-cache tracing unavailable: " + e.Reason
	if e.Hint != "" {
		s += fmt.Sprintf(" (%s)", e.Hint)
	}
	return s
}

// Unwrap returns the underlying error.
func (e *UnavailableError) Unwrap() error { return e.Err }
