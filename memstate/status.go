package memstate

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/prometheus/procfs"

	"github.com/memdiag/memdiag/process"
)

// statusLimit bounds one /proc/PID/status, as procfs bounds the files it
// reads (a kernel's is under 2 KiB).
const statusLimit = 1 << 20

// readStatus reads the fields of <procRoot>/<pid>/status that memstate
// uses: Name, VmRSS, RssAnon, RssFile, RssShmem and VmSwap (kB, returned
// in bytes). Source: https://docs.kernel.org/filesystems/proc.html
// (Table 1-2, "Contents of the status fields").
//
// It replaces procfs's Proc.NewStatus, which parses every field and is
// unsafe on a file under --root: "Uid:" with more than four values indexes
// past its array (a panic), and a "Cpus_allowed_list:" range like
// 0-18446744073709551615 loops forever appending (found by FuzzProcs).
//
// The file is read inside procRoot (process.ReadPIDFile): a FIFO, a
// device or a link out of the root is refused, and a file over
// statusLimit is an error, not cut short.
func readStatus(procRoot string, pid int) (procfs.ProcStatus, error) {
	b, err := process.ReadPIDFile(context.Background(), procRoot, pid, "status", statusLimit)
	if err != nil {
		return procfs.ProcStatus{}, err
	}
	s, err := parseStatus(b)
	if err != nil {
		return s, fmt.Errorf("%s:%w", filepath.Join(procRoot, strconv.Itoa(pid), "status"), err)
	}
	return s, nil
}

// parseStatus parses the fields readStatus keeps. A field without a
// number, or one past 2^64 bytes, is an error wrapping ErrParse that
// begins with the line number ("3: …"), for readStatus to put after the
// file's name.
func parseStatus(b []byte) (procfs.ProcStatus, error) {
	var s procfs.ProcStatus
	for i, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		if k == "Name" {
			s.Name = v
			continue
		}
		var dst *uint64
		switch k {
		case "VmRSS":
			dst = &s.VmRSS
		case "RssAnon":
			dst = &s.RssAnon
		case "RssFile":
			dst = &s.RssFile
		case "RssShmem":
			dst = &s.RssShmem
		case "VmSwap":
			dst = &s.VmSwap
		default:
			continue
		}
		num, ok := strings.CutSuffix(v, " kB")
		if !ok {
			return s, fmt.Errorf("%d: %w: %s: %q is not a number of kB", i+1, ErrParse, k, v)
		}
		n, err := strconv.ParseUint(strings.TrimSpace(num), 10, 64)
		if err != nil {
			return s, fmt.Errorf("%d: %w: %s: %q is not a number of kB", i+1, ErrParse, k, v)
		}
		if n > math.MaxUint64/1024 {
			return s, fmt.Errorf("%d: %w: %s: %d kB is past 2^64 bytes", i+1, ErrParse, k, n)
		}
		*dst = n * 1024
	}
	return s, nil
}
