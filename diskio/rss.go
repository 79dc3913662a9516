package diskio

import (
	"bytes"
	"cmp"
	"slices"

	"golang.org/x/sys/unix"
)

// ProcRSS is one process's resident memory at one sample, kept small for
// recordings (`memdiag watch` stores the top processes by RSS each
// interval; memstate.Growth fits them). Source: /proc/PID/status RssAnon,
// RssFile, RssShmem (kB, converted to bytes here);
// https://docs.kernel.org/filesystems/proc.html ("/proc/<pid>/status").
type ProcRSS struct {
	PID int `json:"pid"`
	// StartTicks is the start time in clock ticks after boot; with PID it
	// tells a process from a later one that reuses its PID.
	StartTicks uint64 `json:"start_ticks"`
	Comm       string `json:"comm"`
	AnonBytes  uint64 `json:"anon_bytes"`  // RssAnon
	FileBytes  uint64 `json:"file_bytes"`  // RssFile
	ShmemBytes uint64 `json:"shmem_bytes"` // RssShmem
}

// TopRSS returns the n processes with the largest RSS at the last Scan,
// largest first, with RSS split into anon, file and shmem. The ranking
// uses the resident page count Scan already read from /proc/PID/stat
// (field 24), so only n /proc/PID/status files are read: cheap enough for
// every sample. Processes that exited since the scan are left out.
func (s *ProcScanner) TopRSS(n int) []ProcRSS {
	if n <= 0 {
		return nil
	}
	s.rssCand = s.rssCand[:0]
	for _, st := range s.procs {
		if st.gen == s.gen && st.rss > 0 {
			s.rssCand = append(s.rssCand, st)
		}
	}
	slices.SortFunc(s.rssCand, func(a, b *procState) int {
		if c := cmp.Compare(b.rss, a.rss); c != 0 {
			return c
		}
		return cmp.Compare(a.pid, b.pid)
	})
	fd := s.rootfd // kept open between scans on procfs
	if fd < 0 {
		var err error
		fd, err = unix.Open(s.procRoot, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil
		}
		defer unix.Close(fd)
	}
	out := make([]ProcRSS, 0, min(n, len(s.rssCand)))
	for _, st := range s.rssCand {
		if len(out) == n {
			break
		}
		k, err := s.readFile(fd, s.path(st.pid, "status"), s.fileBuf)
		if err != nil {
			continue
		}
		r := ProcRSS{PID: st.pid, StartTicks: st.start, Comm: st.comm}
		if !parseStatusRSS(s.fileBuf[:k], &r) {
			continue // a kernel thread (no Rss lines) or a torn read
		}
		out = append(out, r)
	}
	return out
}

// parseStatusRSS reads the RssAnon, RssFile and RssShmem lines (kB) of
// /proc/PID/status into r; ok is false when RssAnon is missing (kernels
// before 4.5, kernel threads).
func parseStatusRSS(b []byte, r *ProcRSS) (ok bool) {
	for len(b) > 0 {
		var line []byte
		line, b = cutLine(b)
		var dst *uint64
		switch {
		case bytes.HasPrefix(line, []byte("RssAnon:")):
			dst, ok = &r.AnonBytes, true
		case bytes.HasPrefix(line, []byte("RssFile:")):
			dst = &r.FileBytes
		case bytes.HasPrefix(line, []byte("RssShmem:")):
			dst = &r.ShmemBytes
		default:
			continue
		}
		f := bytes.Fields(line[bytes.IndexByte(line, ':')+1:])
		if len(f) == 0 {
			return false
		}
		v, good := parseUint(f[0])
		if !good {
			return false
		}
		*dst = v * 1024 // "kB" in /proc means KiB
	}
	return ok
}
