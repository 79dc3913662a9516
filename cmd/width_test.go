package cmd

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/creack/pty"
	"github.com/mattn/go-runewidth"

	"github.com/memdiag/memdiag/internal/iostreams"
)

// runInPTYAt runs a memdiag command line with stdout on a pseudo-terminal
// of cols columns (stderr too), as a user's terminal would be, with the
// clock now, and returns the exit code and what the terminal received,
// ANSI sequences removed.
func runInPTYAt(t *testing.T, cols int, now func() time.Time, args ...string) (int, string) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	if err := pty.Setsize(tty, &pty.Winsize{Rows: 50, Cols: uint16(cols)}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	done := make(chan struct{})
	go func() { io.Copy(&buf, ptmx); close(done) }()
	ios := iostreams.Files(os.Stdin, tty, tty)
	ios.DisableColor() // NO_COLOR: widths are the same, the text is easier to check
	f := &factory{IO: ios, Now: now, Root: "/"}
	code := execute(context.Background(), f, args)
	tty.Close()
	<-done
	return code, strings.ReplaceAll(buf.String(), "\r\n", "\n")
}

// width measures as a terminal outside East Asian locales does: box
// drawing and "…" are one column.
var width = &runewidth.Condition{EastAsianWidth: false}

// TestTablesFit80Columns: on an 80-column terminal no command's table
// output has a line wider than 80 columns.
func TestTablesFit80Columns(t *testing.T) {
	rec := unionRec
	cases := [][]string{
		{"timers", "--root", timersRoot("debian"), "--base-time", "2026-11-29T12:00:00Z", "--tz", "UTC"},
		{"timers", "--root", timersRoot("debian"), "--base-time", "2026-11-29T12:00:00Z", "--tz", "UTC", "--all", "--next", "2"},
		{"timers", "--root", timersRoot("debian"), "--tz", "UTC", "--from", "2026-11-29 12:00", "--to", "2026-11-29 14:00"},
		// a long zone name in the NEXT header; problems under the table
		{"timers", "--root", timersRoot("edge"), "--base-time", "2026-11-29T12:00:00Z", "--tz", "America/Argentina/Buenos_Aires", "--all", "--next", "2"},
		{"timers", "--root", timersRoot("edge"), "--base-time", "2026-11-29T12:00:00Z", "--tz", "Europe/Berlin"},
		{"timers", "--root", timersRoot("sysstat-twice"), "--base-time", "2026-11-29T12:00:00Z", "--tz", "UTC", "--all"},
		{"timers", "--root", timersRoot("debian"), "--tz", "America/Argentina/Buenos_Aires", "--from", "2026-11-29 12:00", "--to", "2026-11-30 14:00"},
		{"analyze", rec},
		{"analyze", rec, "--values"},
		// a real recording with the victim's delay accounting: its
		// "waits on memory" section
		{"analyze", victimWaitsRec},
		{"compare", rec, rec},
		{"gate", "--recording", rec, "-t", "memory.some.stall<1%", "-t", "oom_kills==0"},
		{"mem", "--root", filepath.Join("..", "testdata", "linux-6.18"), "--interval", "0"},
		// the OOM KILLS table with a cgroup name to wrap
		{"mem", "--root", filepath.Join("..", "testdata", "linux-6.18"), "--interval", "0",
			"--kernel-log", filepath.Join("..", "memstate", "testdata", "oom", "host618-shmem-oom.journal.txt")},
	}
	// 40 real OOM kills: the capped table and its counts line
	cases = append(cases, []string{"mem", "--root", filepath.Join("..", "testdata", "linux-6.18"), "--interval", "0",
		"--kernel-log", gunzipTo(t, filepath.Join("..", "memstate", "testdata", "oom", "host618-40-memcg-oom.dmesg-T.txt.gz"))})
	// watch: a live run on this host, and one with every optional column
	// (a latency probe of a local server, a cgroup's PSI from a fixture
	// root) that must make room for them.
	tmp := t.TempDir()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	defer srv.Close()
	hog, err := filepath.Abs(filepath.Join("..", "testdata", "linux-6.18-hog-t0"))
	if err != nil {
		t.Fatal(err)
	}
	watch := []string{"watch", "--interval", "100ms", "--duration", "600ms", "--no-timers", "--events", "off"}
	cases = append(cases,
		append(slices.Clone(watch), "--out", filepath.Join(tmp, "host.jsonl")),
		append(slices.Clone(watch), "--out", filepath.Join(tmp, "all.jsonl"), "--root", hog,
			"--cgroup", "/sys/fs/cgroup/unified/lru-fixture", "--probe", srv.URL),
	)
	for _, args := range cases {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			_, out := runInPTYAt(t, 80, time.Now, args...)
			if args[0] == "watch" {
				// The live header is there, with the latency and cgroup
				// columns when there are sources for them.
				want := "TIME      SOME"
				if slices.Contains(args, "--probe") {
					want = "TIME        P99  ERR  SOME  CG-S"
				}
				if !strings.Contains(out, "\n"+want) {
					t.Errorf("no live header %q in:\n%s", want, out)
				}
			}
			sc := bufio.NewScanner(strings.NewReader(out))
			n := 0
			for sc.Scan() {
				n++
				if w := width.StringWidth(sc.Text()); w > 80 {
					t.Errorf("line %d is %d columns wide:\n%s", n, w, sc.Text())
				}
			}
			if n < 3 {
				t.Errorf("only %d lines of output:\n%s", n, out)
			}
		})
	}
}

// victimWaitsRec is a real recording whose victim's delay accounting
// rose in its one episode (correlate/testdata/SOURCE).
const victimWaitsRec = "../correlate/testdata/real/victim-waits.jsonl.gz"

// TestAnalyzeVictimWaits80: the text report of a real recording with the
// victim's waits on memory, as an 80-column terminal shows it: every
// line, the waits section's included, within 80 columns (the golden is
// the reviewed page).
func TestAnalyzeVictimWaits80(t *testing.T) {
	code, out := runInPTYAt(t, 80, time.Now, "analyze", victimWaitsRec)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if !strings.Contains(out, "THE VICTIM'S WAITS ON MEMORY\n\n  - episode at 11:14:48: the victim's process (pid 775) waited 138ms in\n    reclaim (delay accounting)\n") {
		t.Errorf("no wrapped waits section:\n%s", out)
	}
	for i, l := range strings.Split(out, "\n") {
		if w := width.StringWidth(l); w > 80 {
			t.Errorf("line %d is %d columns wide: %s", i+1, w, l)
		}
	}
	golden(t, "analyze-victim-waits.tty80.txt", out)
}

// Every command's --help fits 80 columns when stdout is not a terminal
// (flag descriptions wrapped: cobra prints each on one line, up to 548
// columns before), but for a line that is one word too long to break (a
// path, a PromQL example).
func TestHelpFits80Columns(t *testing.T) {
	for _, c := range []string{"", "watch", "record", "analyze", "compare", "gate", "mem", "timers", "confirm", "man", "version"} {
		args := []string{"--help"}
		if c != "" {
			args = []string{c, "--help"}
		}
		code, out, errOut := runCmd(t, args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d\n%s", args, code, errOut)
		}
		for l := range strings.SplitSeq(out, "\n") {
			if n := utf8.RuneCountInString(l); n > 80 && len(strings.Fields(l)) > 1 {
				t.Errorf("memdiag %s --help: a line of %d columns:\n%s", c, n, l)
			}
		}
	}
}
