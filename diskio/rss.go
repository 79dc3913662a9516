package diskio

import (
	"bytes"
	"cmp"
	"math"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/memdiag/memdiag/process"
)

// growState is what the scanner keeps per process to notice RSS growth
// without keeping its history: the lowest and highest resident pages
// since it was first seen (or since it last stopped being a candidate),
// and when it last reached a new high as a candidate.
type growState struct {
	base, high uint64 // resident pages (stat field 24)
	highAt     int64  // Unix ns of the last new high while a candidate
	cand       bool   // a growth candidate now
	fresh      bool   // became one since RSS last reported it
	// recGen is the scan (ProcScanner.gen) in which RSS last returned it
	// as a candidate: with more candidates than MaxGrowth, those
	// returned longest ago go first, so each is recorded in turn.
	recGen uint64
}

// trackGrowth updates st's growth state after a scan read its resident
// pages: a few comparisons per process and scan. A process becomes a
// growth candidate when its RSS reaches a new high at least GrowthFloor
// above the lowest seen (it grew, and is still at its highest: a rising
// trend, not a spike that went back down); it stays one until it makes no
// new high for GrowthIdle, and then its baseline starts again from there,
// so a process that grew once at start-up and then held steady is
// followed for GrowthIdle, not for its whole life.
func (s *ProcScanner) trackGrowth(st *procState, created bool) {
	g := &st.grow
	if created {
		*g = growState{base: st.rss, high: st.rss}
		return
	}
	switch {
	case st.rss < g.base:
		g.base = st.rss
	case st.rss > g.high:
		g.high = st.rss
		if st.rss-g.base >= s.floorPages {
			if !g.cand {
				g.cand, g.fresh = true, true
			}
			g.highAt = s.now
		}
	}
	if g.cand && s.now-g.highAt > int64(s.opts.GrowthIdle) {
		*g = growState{base: st.rss, high: st.rss}
	}
	if g.cand {
		s.growCand = append(s.growCand, st)
	}
}

// TopRSS returns the n processes with the largest RSS at the last Scan,
// largest first, with RSS split into anon, file and shmem. The ranking
// uses the resident page count Scan already read from /proc/PID/stat
// (field 24), so only n /proc/PID/status files are read: cheap enough for
// every sample. Processes that exited since the scan are left out.
func (s *ProcScanner) TopRSS(n int) []process.RSS {
	out, _ := s.rss(n, false)
	return out
}

// RSS returns what `watch` records of memory each interval: the n
// processes with the largest RSS, largest first (as TopRSS), then the
// growth candidates not among them, the most grown first, at most
// MaxGrowth: processes whose RSS rose at least GrowthFloor above the
// lowest seen to a new high within the last GrowthIdle (see
// trackGrowth). So a small process growing slowly is followed as long as
// it grows, however many larger ones there are. With more candidates
// than MaxGrowth, the MaxGrowth returned longest ago (new ones first)
// are returned, so every candidate is returned in turn (about MaxGrowth
// in every number-of-candidates calls), and GrowthLeftOut says how many
// were not. Only these processes' /proc/PID/status files are read.
// fresh indexes the processes of out that became candidates since the
// last call: whoever records them can read what it reads once per
// grower (memstate's retention evidence).
func (s *ProcScanner) RSS(n int) (out []process.RSS, fresh []int) {
	return s.rss(n, true)
}

func (s *ProcScanner) rss(n int, growth bool) (out []process.RSS, fresh []int) {
	grow := s.growCand
	if !growth {
		grow = nil
	}
	s.rssCand = s.rssCand[:0]
	if n > 0 {
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
	}
	if n <= 0 && len(grow) == 0 {
		return nil, nil
	}
	fd := s.rootfd // kept open between scans on procfs
	if fd < 0 {
		var err error
		fd, err = unix.Open(s.procRoot, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, nil
		}
		defer unix.Close(fd)
	}
	out = make([]process.RSS, 0, min(n, len(s.rssCand))+min(len(grow), s.opts.MaxGrowth))
	top := 0
	for _, st := range s.rssCand {
		if top == n {
			break
		}
		top++ // the n largest, whether or not status reads
		if r, ok := s.readRSS(fd, st); ok {
			if growth && st.grow.fresh {
				st.grow.fresh = false
				fresh = append(fresh, len(out))
			}
			out = append(out, r)
		}
	}
	inTop := s.rssCand[:top]
	var pick []*procState
	for _, st := range grow {
		if st.gen == s.gen && !slices.Contains(inTop, st) {
			pick = append(pick, st)
		}
	}
	mostGrown := func(a, b *procState) int {
		if c := cmp.Compare(b.rss-b.grow.base, a.rss-a.grow.base); c != 0 {
			return c
		}
		return cmp.Compare(a.pid, b.pid)
	}
	if growth {
		s.growLeftOut = 0
	}
	if growth && len(pick) > s.opts.MaxGrowth {
		// Those returned longest ago first: every candidate in turn.
		slices.SortFunc(pick, func(a, b *procState) int {
			if c := cmp.Compare(a.grow.recGen, b.grow.recGen); c != 0 {
				return c
			}
			return mostGrown(a, b)
		})
		s.growLeftOut = len(pick) - s.opts.MaxGrowth
		pick = pick[:s.opts.MaxGrowth]
	}
	slices.SortFunc(pick, mostGrown)
	for _, st := range pick {
		st.grow.recGen = s.gen
		if r, ok := s.readRSS(fd, st); ok {
			if st.grow.fresh {
				st.grow.fresh = false
				fresh = append(fresh, len(out))
			}
			out = append(out, r)
		}
	}
	return out, fresh
}

// GrowthLeftOut is how many growth candidates the last RSS call left
// out because there were more than MaxGrowth of them (0 when it
// returned them all). Each is returned in a later call, in turn.
func (s *ProcScanner) GrowthLeftOut() int { return s.growLeftOut }

// readRSS reads one process's /proc/PID/status RSS split.
func (s *ProcScanner) readRSS(fd int, st *procState) (process.RSS, bool) {
	k, err := s.readFile(fd, s.path(st.pid, "status"), s.fileBuf)
	if err != nil {
		return process.RSS{}, false
	}
	r := process.RSS{PID: st.pid, StartTicks: st.start, Comm: st.comm}
	if !parseStatusRSS(s.fileBuf[:k], &r) {
		return process.RSS{}, false // a kernel thread (no Rss lines) or a torn read
	}
	if st.cgroup == "" {
		// A holder that did no I/O was never described: its cgroup
		// tells another tenant's memory from the analysed group's.
		s.readMeta(st, nil)
	}
	r.Cgroup = st.cgroup
	return r, true
}

// parseStatusRSS reads the RssAnon, RssFile and RssShmem lines (kB) and
// the Threads line (a count) of /proc/PID/status into r; ok is false
// when RssAnon is missing (kernels before 4.5, kernel threads) or a line
// read has no number.
func parseStatusRSS(b []byte, r *process.RSS) (ok bool) {
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
		case bytes.HasPrefix(line, []byte("Threads:")):
			f := bytes.Fields(line[len("Threads:"):])
			if len(f) == 0 {
				return false
			}
			v, good := parseUint(f[0])
			if !good || v > math.MaxInt32 {
				return false
			}
			r.Threads = int(v)
			continue
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
