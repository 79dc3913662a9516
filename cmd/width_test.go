package cmd

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/mattn/go-runewidth"

	"github.com/memdiag/memdiag/internal/iostreams"
)

// runInPTY runs a memdiag command line with stdout on a pseudo-terminal
// of cols columns (stderr too), as a user's terminal would be, and returns
// the exit code and what the terminal received, ANSI sequences removed.
func runInPTY(t *testing.T, cols int, args ...string) (int, string) {
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
	f := &Factory{IO: ios, Now: func() time.Time { return time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC) }, Root: "/"}
	code := Run(context.Background(), f, args)
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
		{"analyze", rec},
		{"analyze", rec, "--values"},
		{"compare", rec, rec},
		{"gate", "--recording", rec, "-t", "memory.some.stall<1%", "-t", "oom_kills==0"},
		{"mem", "--root", filepath.Join("..", "testdata", "linux-6.18"), "--interval", "0"},
		// Not yet: watch's live rows (about 108 columns) and its end
		// summary do not fit 80 columns.
	}
	for _, args := range cases {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			_, out := runInPTY(t, 80, args...)
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
