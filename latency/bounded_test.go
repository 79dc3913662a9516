package latency

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestImportOversizeLine: a line over maxLine in a results file is a bad
// row, read past without being held (it grew without bound before); the
// rows around it are imported.
func TestImportOversizeLine(t *testing.T) {
	huge := strings.Repeat("9", maxLine+5)
	in := "timestamp,latency_ms,status\n2026-11-29T22:00:00.250Z,12.5,200\n" + huge + "\n2026-11-29T22:00:01.250Z,20,200\n" + huge
	imp, err := Import(strings.NewReader(in), "r.csv", ImportOptions{Format: formatGeneric})
	if err != nil {
		t.Fatal(err)
	}
	if len(imp.Requests.Slice()) != 2 || imp.Report.Bad != 2 {
		t.Fatalf("%d requests, %d bad; want 2 and 2: %+v", len(imp.Requests.Slice()), imp.Report.Bad, imp.Report.BadLines)
	}
	e := imp.Report.BadLines[0]
	if e.Line != 3 || !errors.Is(e.Err, ErrLineTooLong) || !strings.Contains(e.Text, "1048582 bytes") {
		t.Errorf("bad line %+v", e)
	}
	if imp.Report.BadLines[1].Line != 5 {
		t.Errorf("the unterminated huge last line: %+v", imp.Report.BadLines[1])
	}
}

// TestFollowOversizeLine: a followed file whose line grows past maxLine
// (across many reads, without a newline for a while) costs no more than
// maxLine; the line is a bad row and the rows after it arrive.
func TestFollowOversizeLine(t *testing.T) {
	b, err := os.ReadFile(fixture("vegeta.csv"))
	if err != nil {
		t.Fatal(err)
	}
	row := strings.SplitAfter(string(b), "\n")[0]
	path := filepath.Join(t.TempDir(), "latency-huge.csv")
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		out := make(chan Request, 16)
		done := make(chan *ImportReport)
		go func() {
			rep, err := Follow(ctx, path, FollowOptions{}, out)
			if err != nil {
				t.Errorf("Follow: %v", err)
			}
			done <- rep
		}()
		appendFile(t, path, row)
		for range 3 { // 3 × 1 MiB without a newline, one poll apart
			time.Sleep(time.Second)
			synctest.Wait()
			appendFile(t, path, strings.Repeat("x", 1<<20))
		}
		appendFile(t, path, "\n"+row)
		time.Sleep(time.Second)
		synctest.Wait()
		cancel()
		rep := <-done
		close(out)
		n := 0
		for range out {
			n++
		}
		if n != 2 || rep.Bad != 1 || !errors.Is(rep.BadLines[0].Err, ErrLineTooLong) || rep.BadLines[0].Line != 2 {
			t.Errorf("%d requests, report %+v; want 2 and line 2 too long", n, rep)
		}
	})
}
