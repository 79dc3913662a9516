// Package cpuprofile writes the pprof CPU profile of a whole run (the
// hidden --cpuprofile of watch, for bench/).
package cpuprofile

import (
	"fmt"
	"io/fs"
	"runtime/pprof"

	"github.com/memdiag/memdiag/internal/outfile"
)

// Start starts profiling into path (created with outfile, mode); stop
// ends it and closes the file. An empty path profiles nothing.
func Start(path string, mode fs.FileMode) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	pf, err := outfile.Create(path, outfile.Options{Overwrite: true, Mode: mode})
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(pf); err != nil {
		pf.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); pf.Close() }, nil
}
