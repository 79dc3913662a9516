package analysis

import (
	"runtime/debug"
	"testing"
)

// LimitMemory sets MemoryLimit and restores the previous limit; with
// GOMEMLIMIT set it leaves the runtime's limit alone.
func TestLimitMemory(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	before := debug.SetMemoryLimit(-1)
	restore := LimitMemory()
	if got := debug.SetMemoryLimit(-1); got != MemoryLimit {
		t.Errorf("limit while analyzing = %d, want %d", got, MemoryLimit)
	}
	restore()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("limit after = %d, want %d", got, before)
	}
	t.Setenv("GOMEMLIMIT", "1GiB")
	restore = LimitMemory()
	got := debug.SetMemoryLimit(-1)
	restore()
	if got != before {
		t.Errorf("GOMEMLIMIT set: limit = %d, want %d untouched", got, before)
	}
}
