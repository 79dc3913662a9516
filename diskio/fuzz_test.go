package diskio

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/memdiag/memdiag/internal/testutil"
	"github.com/memdiag/memdiag/process"
)

func seedProc(f *testing.F, name string) {
	f.Helper()
	testutil.Seed[[]byte](f, "../testdata/diskio/poll/t0/proc/15749/"+name, "../testdata/diskio/poll/t0/proc/9225/"+name)
}

// FuzzParseStat checks that no /proc/PID/stat panics the parser and that
// what it accepts is what the file says.
func FuzzParseStat(f *testing.F) {
	seedProc(f, "stat")
	f.Add([]byte("1 (a) b) S 99999999999999999999 " + strings.Repeat("0 ", 40)))
	f.Fuzz(func(t *testing.T, b []byte) {
		sf, ok := parseStat(b)
		comm, ppid := sf.comm, sf.ppid
		if !ok {
			return
		}
		if ppid < 0 {
			t.Fatalf("ppid %d", ppid)
		}
		if len(comm) > len(b) {
			t.Fatalf("comm longer than the file")
		}
		// On a line shaped as the kernel writes it (one space between
		// fields after the comm) that the strict parser takes too, both
		// read the same fields. (On other spacing they differ, as they
		// always have: the fast one counts single spaces.)
		if strict, err := process.ParseStat(b); err == nil && kernelSpaced(b) &&
			(strict.Comm != string(comm) || strict.PPID != ppid || strict.StartTicks != sf.start || strict.NumThreads != sf.threads) {
			t.Fatalf("fast parse %q ppid %d start %d threads %d; strict %+v", comm, ppid, sf.start, sf.threads, strict)
		}
	})
}

// FuzzParseIO checks that no /proc/PID/io panics the parser and that each
// byte count it accepts is the decimal number written.
func FuzzParseIO(f *testing.F) {
	seedProc(f, "io")
	f.Add([]byte("read_bytes: 99999999999999999999\nwrite_bytes: 0\ncancelled_write_bytes: 0\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		rd, wr, cw, ok := parseIO(b)
		if !ok {
			return
		}
		last := map[string]string{}
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, found := strings.Cut(l, ":"); found {
				last[k] = strings.TrimLeft(v, " ")
			}
		}
		for k, got := range map[string]uint64{"read_bytes": rd, "write_bytes": wr, "cancelled_write_bytes": cw} {
			if n, err := strconv.ParseUint(last[k], 10, 64); err != nil || n != got {
				t.Fatalf("%s = %d, written %q", k, got, last[k])
			}
		}
	})
}

// FuzzParsePID checks /proc directory names.
func FuzzParsePID(f *testing.F) {
	f.Add([]byte("1"))
	f.Add([]byte("4194304"))
	f.Add([]byte("99999999999999999999"))
	f.Fuzz(func(t *testing.T, b []byte) {
		pid, ok := parsePID(b)
		if ok && pid <= 0 {
			t.Fatalf("parsePID(%q) = %d", b, pid)
		}
	})
}

// TestParseFuzzFindings: what FuzzParseIO, FuzzParseStat and FuzzParsePID
// found. A field written twice made /proc/PID/io complete without
// cancelled_write_bytes; a 20-digit number past 2^64-1 wrapped; a ppid
// past int32 became negative; "0" was a PID.
func TestParseFuzzFindings(t *testing.T) {
	if _, _, _, ok := parseIO([]byte("read_bytes: 1\nwrite_bytes: 2\nwrite_bytes: 3\n")); ok {
		t.Error("parseIO accepted a file without cancelled_write_bytes")
	}
	if _, _, _, ok := parseIO([]byte("read_bytes: 99999999999999999999\nwrite_bytes: 0\ncancelled_write_bytes: 0\n")); ok {
		t.Error("parseIO accepted 99999999999999999999")
	}
	if rd, wr, cw, ok := parseIO([]byte("read_bytes: 18446744073709551615\nwrite_bytes: 2\ncancelled_write_bytes: 3\n")); !ok || rd != 18446744073709551615 || wr != 2 || cw != 3 {
		t.Errorf("parseIO of the largest counter: %d %d %d %v", rd, wr, cw, ok)
	}
	if sf, ok := parseStat([]byte("1 (a) S 9223372036854775808 " + strings.Repeat("0 ", 40))); ok {
		t.Errorf("parseStat accepted ppid 2^63 as %d", sf.ppid)
	}
	if pid, ok := parsePID([]byte("0")); ok {
		t.Errorf("parsePID(0) = %d, ok", pid)
	}
}

// FuzzParseStatusRSS checks that no /proc/PID/status panics the RSS
// parser and that what it accepts has an RssAnon line and a thread count
// that is the number its last Threads line says.
func FuzzParseStatusRSS(f *testing.F) {
	testutil.Seed[[]byte](f, "../memstate/testdata/host618/proc/12762/status", "../memstate/testdata/host618/proc/13604/status")
	f.Add([]byte("RssAnon:\t99999999999999999999 kB\nThreads:\t3\n"))
	f.Add([]byte("RssAnon:\t4 kB\nThreads:\t99999999999\n"))
	f.Add([]byte("RssAnon:\t4 kB\nThreads:\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var r process.RSS
		if !parseStatusRSS(b, &r) {
			return
		}
		if !strings.Contains(string(b), "RssAnon:") {
			t.Fatalf("accepted without an RssAnon line: %+v", r)
		}
		if r.Threads < 0 {
			t.Fatalf("threads %d", r.Threads)
		}
		if i := strings.LastIndex(string(b), "\nThreads:"); i >= 0 || strings.HasPrefix(string(b), "Threads:") {
			line := string(b)[i+1:]
			line, _, _ = strings.Cut(line, "\n")
			if f := strings.Fields(strings.TrimPrefix(line, "Threads:")); len(f) > 0 && strconv.Itoa(r.Threads) != strings.TrimLeft(f[0], "0") && r.Threads != 0 {
				t.Fatalf("threads %d from line %q", r.Threads, line)
			}
		}
	})
}

// kernelSpaced reports whether the fields after a stat line's comm are
// separated as the kernel separates them: single spaces, then at most a
// final newline.
func kernelSpaced(b []byte) bool {
	i := bytes.LastIndexByte(b, ')')
	rest := bytes.TrimSuffix(b[i+1:], []byte("\n"))
	return len(rest) > 1 && rest[0] == ' ' && rest[len(rest)-1] != ' ' &&
		!bytes.Contains(rest, []byte("  ")) && !bytes.ContainsAny(rest, "\t\n\v\f\r")
}
