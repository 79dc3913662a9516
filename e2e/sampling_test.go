package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/testenv"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/store"
)

// Sampling never waits for readers: `memdiag watch --listen` and
// `memdiag record --listen` are scraped by bursts of 200 concurrent
// requests for their whole run, and no sample of the recording may be
// more than half an interval late or missed — the sampler's own
// measurement (record.Gap), read from the recording — and every scrape
// is answered.
func TestScrapesDoNotDelaySampling(t *testing.T) {
	testenv.RequireRoot(t, "every process's /proc/PID/io and the process-events connector, as the recorder runs for real")
	memdiag := testenv.BuildMemdiag(t)
	testenv.Exclusive(t)
	for _, mode := range []string{"watch", "record"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			port := freePort(t)
			addr := fmt.Sprintf("127.0.0.1:%d", port)
			out := filepath.Join(dir, "run.jsonl")
			var argv []string
			if mode == "watch" {
				argv = []string{"watch", "--quiet", "--interval", "1s", "--duration", "12s", "--listen", addr, "--out", out}
			} else {
				argv = []string{"record", "--store", filepath.Join(dir, "store"), "--interval", "1s", "--listen", addr}
			}
			rec := startRecorder(t, dir, memdiag, argv...)
			url := "http://" + addr + "/metrics"
			waitHTTP(t, url, 30*time.Second)

			// Bursts of 200 concurrent scrapes, one after the other, over
			// 10 samples (the watch's samples_total reaches 11 at its end).
			startN := metric(t, url, "memdiag_samples_total")
			bursts, failed := 0, 0
			for metric(t, url, "memdiag_samples_total") < startN+10 {
				failed += burst(url, 200)
				bursts++
			}
			if mode == "record" {
				if err := rec.Process.Signal(syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
			}
			if err := rec.Wait(); err != nil {
				t.Fatalf("memdiag %s: %v\n%s", mode, err, readLog(dir))
			}
			if failed > 0 {
				t.Errorf("%d of %d scrapes failed", failed, 200*bursts)
			}
			var samples []record.Sample
			if mode == "record" {
				samples = storeSamples(t, filepath.Join(dir, "store"))
			} else {
				r, err := record.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				samples = r.Samples
			}
			if len(samples) < 10 {
				t.Fatalf("%d samples, want at least the 10 scraped through", len(samples))
			}
			for _, s := range samples {
				if s.Gap != nil {
					t.Errorf("sample %d (%s): %s gap from %s, %d missed, %s late", s.Seq, s.Time.Format(time.TimeOnly), s.Gap.Reason,
						s.Gap.Start.Format(time.TimeOnly), s.Gap.Missed, s.Gap.Late)
				}
			}
			t.Logf("%s: %d bursts of 200 scrapes over %d samples, none late", mode, bursts, len(samples))
		})
	}
}

// A recorder stopped for 3 s (SIGSTOP, SIGCONT) records the samples it
// missed as a gap, counts them in /metrics, and analyze and gate say so.
func TestStoppedRecorderGap(t *testing.T) {
	testenv.RequireRoot(t, "every process's /proc/PID/io and the process-events connector, as the recorder runs for real")
	memdiag := testenv.BuildMemdiag(t)
	testenv.Exclusive(t)
	dir := t.TempDir()
	st := filepath.Join(dir, "store")
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	url := "http://" + addr + "/metrics"
	rec := startRecorder(t, dir, memdiag, "record", "--store", st, "--interval", "1s", "--listen", addr)
	waitHTTP(t, url, 30*time.Second)
	waitMetric(t, url, "memdiag_samples_total", 3)

	// Before the stop is sent, the recorder may still sample; after the
	// resume is sent, it may sample at once: the gap straddles these.
	stopping := time.Now()
	if err := rec.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	resuming := time.Now()
	if err := rec.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	waitMetric(t, url, "memdiag_samples_missed_total", 2)
	n := metric(t, url, "memdiag_samples_total")
	waitMetric(t, url, "memdiag_samples_total", n+3) // samples after the gap: analyze needs a few
	if err := rec.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := rec.Wait(); err != nil {
		t.Fatalf("memdiag record: %v\n%s", err, readLog(dir))
	}

	var gaps []*record.Gap
	for _, s := range storeSamples(t, st) {
		if s.Gap != nil {
			gaps = append(gaps, s.Gap)
		}
	}
	if len(gaps) != 1 {
		t.Fatalf("%d gaps recorded, want the one of the stop: %+v", len(gaps), gaps)
	}
	// The last sample before the stop and the first after it straddle
	// it; a stop of 3 s at 1 s leaves at least 2 slots of the grid
	// without a sample.
	g := gaps[0]
	if g.Start.After(resuming) || g.End.Before(stopping) || g.Missed < 2 || g.Reason != record.GapMissed {
		t.Errorf("gap %+v; want around the stop (sent %s, resumed %s), at least 2 samples missed", g, stopping.Format(time.StampMilli), resuming.Format(time.StampMilli))
	}
	want := fmt.Sprintf("1 gap, %s unseen: %d samples missed", unseen(g.Unseen(time.Second)), g.Missed)
	if g.Late > 0 {
		want = fmt.Sprintf("1 gap, %s unseen: 1 sample more than half an interval late, %d samples missed", unseen(g.Unseen(time.Second)), g.Missed)
	}
	// The service's log says it as it happens.
	if l := fmt.Sprintf("memdiag: warning: record: %d samples missed", g.Missed); !strings.Contains(readLog(dir), l) {
		t.Errorf("the recorder's log does not say %q:\n%s", l, readLog(dir))
	}
	for _, argv := range [][]string{
		{"analyze", st, "--no-color"},
		{"gate", "--recording", st, "-t", "memory.full.stall<100%", "--no-color"},
	} {
		out, _ := exec.Command(memdiag, argv...).CombinedOutput()
		if !strings.Contains(string(out), want) {
			t.Errorf("memdiag %s does not say %q:\n%s", strings.Join(argv, " "), want, out)
		}
	}
}

// unseen formats a duration as record.Gaps does.
func unseen(d time.Duration) string {
	if d < 10*time.Second {
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return fmt.Sprintf("%.0f s", d.Seconds())
}

// startRecorder starts memdiag with argv, logged to dir/memdiag.log, and
// kills it (by its PID) if the test ends before it did.
func startRecorder(t *testing.T, dir, memdiag string, argv ...string) *exec.Cmd {
	t.Helper()
	log, err := os.Create(filepath.Join(dir, "memdiag.log"))
	if err != nil {
		t.Fatal(err)
	}
	c := exec.Command(memdiag, argv...)
	c.Stdout, c.Stderr = log, log
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if c.ProcessState == nil {
			c.Process.Signal(syscall.SIGCONT)
			c.Process.Kill()
			c.Wait()
		}
		log.Close()
	})
	return c
}

func readLog(dir string) string {
	b, _ := os.ReadFile(filepath.Join(dir, "memdiag.log"))
	return string(b)
}

// burst sends n concurrent scrapes of url and returns how many failed
// (an error or a status other than 200, or a body without the samples
// counter).
func burst(url string, n int) int {
	cl := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: n}}
	var wg sync.WaitGroup
	var mu sync.Mutex
	failed := 0
	for range n {
		wg.Go(func() {
			ok := false
			if r, err := cl.Get(url); err == nil {
				b, err := io.ReadAll(r.Body)
				r.Body.Close()
				ok = err == nil && r.StatusCode == http.StatusOK && strings.Contains(string(b), "memdiag_samples_total")
			}
			if !ok {
				mu.Lock()
				failed++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	cl.CloseIdleConnections()
	return failed
}

// metric is the value of an unlabelled metric at url.
func metric(t *testing.T, url, name string) float64 {
	t.Helper()
	r, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	sc := bufio.NewScanner(r.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return f
		}
	}
	t.Fatalf("%s not served at %s", name, url)
	return 0
}

// waitMetric polls url until name reaches at least min, for up to a
// minute.
func waitMetric(t *testing.T, url, name string, min float64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		v := metric(t, url, name)
		if v >= min {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s = %v after a minute, want at least %v", name, v, min)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// storeSamples reads every segment of a store (a run may cross a segment
// boundary), the sample written into both segments at a switch once.
func storeSamples(t *testing.T, dir string) []record.Sample {
	t.Helper()
	segs, err := store.List(dir)
	if err != nil || len(segs) == 0 {
		t.Fatalf("store %s: %d segments (%v)", dir, len(segs), err)
	}
	var out []record.Sample
	for _, sg := range segs {
		r, err := record.ReadFile(sg.Path)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range r.Samples {
			if n := len(out); n > 0 && !s.Time.After(out[n-1].Time) {
				continue
			}
			out = append(out, s)
		}
	}
	return out
}
