package cmd

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/testenv"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/store"
)

// The recorder as a service meets it, as root: a store on a small tmpfs
// that fills up and is freed again, and gate and analyze over the store
// while the recorder writes it. Every wait polls for what it waits for,
// with a deadline of a minute; none sleeps and hopes.

// recorder is a running `memdiag record`.
type recorder struct {
	c    *exec.Cmd
	err  syncBuffer
	done chan struct{}
	code int
}

func startRecorder(t *testing.T, bin string, args ...string) *recorder {
	t.Helper()
	r := &recorder{c: exec.Command(bin, append([]string{"record"}, args...)...), done: make(chan struct{})}
	r.c.Stderr = &r.err
	if err := r.c.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := r.c.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			r.code = ee.ExitCode()
		}
		close(r.done)
	}()
	t.Cleanup(func() {
		select {
		case <-r.done:
		default: // only the process this test started, by its PID
			_ = r.c.Process.Kill()
			<-r.done
		}
		t.Logf("memdiag %s: exit %d\nstderr:\n%s", strings.Join(r.c.Args[1:], " "), r.code, r.err.String())
	})
	return r
}

func (r *recorder) running() bool {
	select {
	case <-r.done:
		return false
	default:
		return true
	}
}

// stop sends SIGTERM and waits for the exit.
func (r *recorder) stop(t *testing.T) {
	t.Helper()
	if err := r.c.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.done:
	case <-time.After(time.Minute):
		t.Fatalf("record still running a minute after SIGTERM\nstderr:\n%s", r.err.String())
	}
}

// until polls cond every 20 ms until it holds, failing the test after a
// minute with what.
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after a minute: not %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// storeSamples reads the store as analyze does: the samples' seq
// numbers, the warnings and the end.
func storeSamples(t *testing.T, dir string) ([]int, *record.Recording) {
	t.Helper()
	segs, err := store.Expand([]string{dir})
	if err != nil {
		return nil, nil
	}
	for _, s := range segs {
		if s.Size == 0 {
			t.Errorf("empty segment %s", s.Path)
		}
	}
	j, err := store.Join(segs, store.Window{})
	if err != nil {
		return nil, nil
	}
	var seqs []int
	rec, err := j.Each(context.Background(), func(s *record.Sample) { seqs = append(seqs, s.Seq) })
	if err != nil {
		t.Fatalf("reading %s: %v", dir, err)
	}
	return seqs, rec
}

// storeGaps returns the gap lines of the store's segments, as far as
// they are written.
func storeGaps(t *testing.T, dir string) []record.Gap {
	t.Helper()
	segs, err := store.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []record.Gap
	for _, sg := range segs {
		f, err := os.Open(sg.Path)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			f.Close()
			t.Fatal(err)
		}
		sc := bufio.NewScanner(zr)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() { // a live segment's stream ends without its trailer: the lines before it are whole
			if strings.HasPrefix(sc.Text(), `{"type":"gap"`) {
				var g record.Gap
				if err := json.Unmarshal(sc.Bytes(), &g); err != nil {
					t.Fatalf("%s: %v", sg.Path, err)
				}
				out = append(out, g)
			}
		}
		f.Close()
	}
	return out
}

func TestRecordE2EStore(t *testing.T) {
	testenv.RequireRoot(t, "a tmpfs mount")
	testenv.Exclusive(t)
	bin := testenv.BuildMemdiag(t)
	t.Run("DiskFull", func(t *testing.T) { recordDiskFull(t, bin) })
	t.Run("GateLive", func(t *testing.T) { recordGateLive(t, bin) })
}

// A store on a 512 KiB tmpfs that another file fills: the recorder stays
// up, the store stays readable (analyze and gate --from -1m, live), the
// samples it cannot write are counted, and when the file is removed it
// writes again, with a gap line saying exactly the samples missing; no
// segment is ever empty.
func recordDiskFull(t *testing.T, bin string) {
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=512k,mode=0700", "memdiag-test-storefull", mnt).CombinedOutput(); err != nil {
		testenv.Unmet(t, fmt.Sprintf("mount tmpfs: %v: %s", err, out))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", mnt, err, out)
		}
	})
	st := filepath.Join(mnt, "st")
	r := startRecorder(t, bin, "--store", st, "--interval", "50ms", "--segment", "2s", "--events", "off", "--ebpf", "off",
		"--no-timers", "--top", "3", "--max-age", "0", "--max-size", "0")
	until(t, "10 samples in the store", func() bool { s, _ := storeSamples(t, st); return len(s) >= 10 })

	// Fill the tmpfs.
	fill := filepath.Join(mnt, "fill")
	f, err := os.OpenFile(fill, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	f.Close()
	// said at the first sample not written
	until(t, "the recorder saying it cannot write", func() bool {
		return strings.Contains(r.err.String(), "no space left on device; recording goes on")
	})
	// While the disk is full: the recorder is up and the store is read,
	// live, by analyze and by gate over the last minute; each read is one
	// more interval the recorder cannot write.
	for i := 0; i < 3; i++ {
		code, out, _ := runBinary(t, bin, "analyze", st)
		if code != exitOK || !strings.Contains(out, "live: up to") {
			t.Fatalf("analyze of the full store: exit %d", code)
		}
		if code, _, _ := runBinary(t, bin, "gate", "-t", "memory.some.stall<=100%", "--recording", st, "--from", "-1m"); code != exitOK {
			t.Fatalf("gate of the full store: exit %d, want %d", code, exitOK)
		}
		if !r.running() {
			t.Fatalf("the recorder exited on a full disk")
		}
	}
	if err := os.Remove(fill); err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`writing again to (\S+): (\d+) samples? from (\S+) to (\S+) not written \(no space left on device\), recorded as a gap`)
	until(t, "the recorder writing again", func() bool { return re.MatchString(r.err.String()) })
	m := re.FindStringSubmatch(r.err.String())
	n, _ := strconv.Atoi(m[2])
	if n < 1 {
		t.Errorf("%d samples not written; the recorder said so at the first", n)
	}
	// One gap line for the samples not written. A recorder starved of
	// CPU (a loaded runner) also records its late and missed samples as
	// gaps ("late", "missed"): those are not this one, unless the sample
	// that ends it was itself late or followed missed ones, when one line
	// says both (record.Gap.merge) and counts both.
	until(t, "the gap line in the store", func() bool {
		var full []record.Gap
		for _, g := range storeGaps(t, st) {
			if slices.Contains(strings.Split(g.Reason, "; "), "no space left on device") {
				full = append(full, g)
			}
		}
		if len(full) != 1 {
			return false
		}
		if full[0].Reason == "no space left on device" {
			return full[0].Missed == n
		}
		return full[0].Missed >= n
	})
	r.stop(t)
	if r.code != exitOK {
		t.Fatalf("record exit %d after SIGTERM", r.code)
	}
	seqs, rec := storeSamples(t, st)
	if rec == nil || rec.End == nil || rec.End.Reason != "signal: SIGTERM" {
		t.Fatalf("the store after SIGTERM: %+v", rec)
	}
	// Every sample taken is in the store but the n of the gap: one jump
	// of n+1 in the sampler's numbering, nowhere else.
	jumps := 0
	for i := 1; i < len(seqs); i++ {
		switch d := seqs[i] - seqs[i-1]; {
		case d == 1:
		case d == n+1:
			jumps++
		default:
			t.Errorf("samples %d → %d: %d missing, the gap says %d", seqs[i-1], seqs[i], d-1, n)
		}
	}
	if jumps != 1 || seqs[0] != 0 {
		t.Errorf("%d gaps of %d samples, first sample %d; want one, from 0", jumps, n, seqs[0])
	}
	if !strings.Contains(r.err.String(), fmt.Sprintf("%d samples not written since", n)) {
		t.Errorf("the stop line does not count the samples not written")
	}
}

// gate --recording STORE --from -1m over a running recorder judges the
// samples so far: a threshold that holds passes (exit 0), one that
// cannot hold fails (exit 3), and a closed window that ends where the
// segment being written starts is judged too.
func recordGateLive(t *testing.T, bin string) {
	st := filepath.Join(t.TempDir(), "st")
	r := startRecorder(t, bin, "--store", st, "--interval", "100ms", "--segment", "2s", "--events", "off", "--ebpf", "off", "--no-timers", "--top", "3")
	var segs []store.Segment
	// three segments: the one before the live one is a whole 2 s (the
	// first may be a sliver, the recorder started just before a switch)
	until(t, "a third segment", func() bool {
		var err error
		segs, err = store.List(st)
		return err == nil && len(segs) >= 3
	})
	code, out, _ := runBinary(t, bin, "gate", "-t", "memory.some.stall<=100%", "--recording", st, "--from", "-1m")
	if code != exitOK || !strings.Contains(out, "memdiag gate: PASS") || !strings.Contains(out, "warning: live: up to ") {
		t.Errorf("gate over the live store: exit %d, want 0, PASS and live", code)
	}
	code, out, _ = runBinary(t, bin, "gate", "-t", "memory.some.stall<0%", "--recording", st, "--from", "-1m")
	if code != exitBreach || !strings.Contains(out, "FAIL") {
		t.Errorf("gate with a threshold that cannot hold: exit %d, want %d", code, exitBreach)
	}
	// A window from the start of the segment before the live one to the
	// live one's start: tried
	// again if the recorder switched segments while gate ran (every 2 s),
	// so that the segment it ends at was live throughout.
	for attempt := 0; ; attempt++ {
		segs, _ = store.List(st)
		live := segs[len(segs)-1]
		from, to := segs[len(segs)-2].Start.Format(time.RFC3339), live.Start.Format(time.RFC3339)
		code, out, _ = runBinary(t, bin, "gate", "-t", "memory.some.stall<=100%", "--recording", st, "--from", from, "--to", to)
		if code != exitOK || strings.Contains(out, "live") {
			t.Errorf("gate over %s..%s, ending where the live segment starts: exit %d, want 0 and no live note", from, to, code)
		}
		if after, _ := store.List(st); after[len(after)-1].Path == live.Path || attempt == 20 {
			if attempt == 20 {
				t.Fatal("20 segment switches during 20 gate runs")
			}
			break
		}
	}
	if !r.running() {
		t.Fatal("the recorder exited")
	}
	r.stop(t)
	if r.code != exitOK {
		t.Errorf("record exit %d after SIGTERM", r.code)
	}
	// Stopped, the same gate reads the ended store: no live note.
	code, out, _ = runBinary(t, bin, "gate", "-t", "memory.some.stall<=100%", "--recording", st, "--from", "-1m")
	if code != exitOK || strings.Contains(out, "live") {
		t.Errorf("gate over the stopped store: exit %d", code)
	}
}
