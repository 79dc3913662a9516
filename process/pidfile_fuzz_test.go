package process

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/memdiag/memdiag/internal/testutil"
)

// pidFixtures are real /proc/PID folders (memstate/testdata/SOURCE: the
// CI machine's Linux 6.18 hog and sleep; a User-Mode Linux 6.1 guest).
var pidFixtures = []string{
	"../memstate/testdata/host618/proc/12762",
	"../memstate/testdata/host618/proc/13604",
	"../memstate/testdata/uml61/proc/700",
}

// addSeeds adds the file name of each real fixture folder, cut to the
// fuzzing seed size (testutil.Head), and the extra seeds.
func addSeeds(f *testing.F, name string, extra ...string) {
	for _, d := range pidFixtures {
		b, err := os.ReadFile(filepath.Join(d, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(testutil.Head(b))
	}
	for _, e := range extra {
		f.Add([]byte(e))
	}
}

// lineErr checks that a parse error wraps ErrParse and begins with a line
// number ("N: ") that is a line of b.
func lineErr(t *testing.T, b []byte, err error) {
	t.Helper()
	if !errors.Is(err, ErrParse) {
		t.Fatalf("error %v does not wrap ErrParse", err)
	}
	n, _, ok := strings.Cut(err.Error(), ":")
	line, cerr := strconv.Atoi(n)
	if !ok || cerr != nil || line < 1 || line > bytes.Count(b, []byte("\n"))+1 {
		t.Fatalf("error %q does not begin with a line of the input", err)
	}
}

// FuzzParseStat: no /proc/PID/stat panics ParseStat; a parsed one has a
// PID and PPID in range and a comm that is a piece of the input; an
// error names the line.
func FuzzParseStat(f *testing.F) {
	addSeeds(f, "stat", "1 (a) S 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0\n", "2 (a) b) S 1", "\x00\x00(\x00)")
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseStat(b)
		if err != nil {
			lineErr(t, b, err)
			return
		}
		if s.PID <= 0 || s.PID > maxPID || s.PPID < 0 || s.PPID > maxPID || s.NumThreads < 0 || s.NumThreads > maxPID {
			t.Fatalf("out of range: %+v", s)
		}
		if !bytes.Contains(b, []byte("("+s.Comm+")")) {
			t.Fatalf("comm %q is not in the input", s.Comm)
		}
	})
}

// FuzzParseComm: a parsed comm is at most 64 bytes without NUL or
// newline; an error names the line.
func FuzzParseComm(f *testing.F) {
	addSeeds(f, "comm", "a\nb\n", "x\x00y\n")
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseComm(b)
		if err != nil {
			lineErr(t, b, err)
			return
		}
		if len(c) > commMax || strings.ContainsAny(c, "\x00\n") {
			t.Fatalf("comm %q", c)
		}
	})
}

// FuzzParseCmdline: the arguments joined by NUL are the input without
// its trailing NULs.
func FuzzParseCmdline(f *testing.F) {
	addSeeds(f, "cmdline", "", "\x00\x00", "a\x00\x00b")
	f.Fuzz(func(t *testing.T, b []byte) {
		args := ParseCmdline(b)
		if got, want := strings.Join(args, "\x00"), string(bytes.TrimRight(b, "\x00")); got != want {
			t.Fatalf("joined %q, want %q", got, want)
		}
	})
}

// FuzzParseRollup: an Rss and a Pss parsed from smaps_rollup are
// multiples of 1 KiB whose kB figures are in the input; an error names
// the line.
func FuzzParseRollup(f *testing.F) {
	addSeeds(f, "smaps_rollup", "Rss: 1 kB\nPss: 18014398509481984 kB\n", "Pss:\n", "Rss: 1 kB\n", "Pss: 1 kB\nRss: 2 kB\n")
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseRollup(b)
		if err != nil {
			lineErr(t, b, err)
			return
		}
		for _, n := range []uint64{r.Rss, r.Pss} {
			if n%1024 != 0 || !bytes.Contains(b, []byte(strconv.FormatUint(n>>10, 10))) {
				t.Fatalf("%+v: %d bytes is not a kB figure of the input", r, n)
			}
		}
	})
}

// FuzzParseIO: read and write bytes parsed from /proc/PID/io are figures
// of the input; an error names the line. Seeds: the real io files of
// testdata/diskio/poll (see its SOURCE) and edge cases.
func FuzzParseIO(f *testing.F) {
	ios, _ := filepath.Glob("../testdata/diskio/poll/*/proc/*/io")
	for _, p := range ios {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(testutil.Head(b))
		}
	}
	f.Add([]byte("rchar: 1\nread_bytes: 4096\nwrite_bytes: 0\ncancelled_write_bytes: 0\n"))
	f.Add([]byte("read_bytes: 18446744073709551616\nwrite_bytes: 0\n"))
	f.Add([]byte("read_bytes 1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := ParseIO(b)
		if err != nil {
			lineErr(t, b, err)
			return
		}
		for _, n := range []uint64{v.ReadBytes, v.WriteBytes} {
			if !bytes.Contains(b, []byte(strconv.FormatUint(n, 10))) {
				t.Fatalf("%d is not in the input", n)
			}
		}
	})
}
