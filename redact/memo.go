package redact

// Memo is [String] with memory: a recording repeats each command line in
// many samples (a process stays in the top N for minutes), and redacting
// once per distinct line keeps reading a day's recording from paying for
// the rules 86,400 times. The zero Memo is ready to use; it is not safe
// for concurrent use.
type Memo struct {
	m map[string]string
}

// memoMax bounds a Memo: past it the memory starts over, so a recording
// of ever-new command lines (PIDs or temp paths in arguments) cannot grow
// it without end.
const memoMax = 1 << 14

// String is [String] of s, remembered.
func (m *Memo) String(s string) string {
	if s == "" {
		return s
	}
	if r, ok := m.m[s]; ok {
		return r
	}
	if m.m == nil || len(m.m) >= memoMax {
		m.m = make(map[string]string)
	}
	r := String(s)
	m.m[s] = r
	return r
}
