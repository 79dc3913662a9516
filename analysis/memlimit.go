package analysis

import (
	"os"
	"runtime/debug"
)

// MemoryLimit is the Go heap's soft limit while a recording is analyzed,
// unless GOMEMLIMIT sets one (https://go.dev/doc/gc-guide#Memory_limit).
// A day (86,400 samples and 1,000,000 requests, bench/analyze.sh) keeps
// ~115 MB live; with the default GOGC=100 alone the heap would grow to
// twice that before a collection, and peak RSS to ~290 MiB instead of
// the 200 MiB budget (docs/benchmarks.md). Below the limit the GC runs as
// usual; near it, it collects earlier. A larger recording may exceed it:
// the runtime then limits the GC's share of CPU rather than fail.
const MemoryLimit = 170 << 20

// LimitMemory sets the heap's soft limit to MemoryLimit unless GOMEMLIMIT
// is set, and returns what puts the previous limit back.
func LimitMemory() (restore func()) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	old := debug.SetMemoryLimit(MemoryLimit)
	return func() { debug.SetMemoryLimit(old) }
}
