package diskio

import "github.com/memdiag/memdiag/process"

// EventStats is process.EventStats.
//
// Deprecated: use process.EventStats; the alias stays while other
// branches use it.
type EventStats = process.EventStats
