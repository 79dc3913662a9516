package latency

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestABNon2xxLost is issue 30's item 11 on a real ab run (ab-non2xx.*,
// testdata/latency/SOURCE): 70 requests, 22 answered 404 or 500. The -g
// file ab writes has one row per request and no status, so every row
// imports as a success: the loss is ab's, and it is exact. ab's standard
// output is the only place the 22 are counted, as a count: ParseABSummary
// reads it.
func TestABNon2xxLost(t *testing.T) {
	imp := importFixture(t, "ab-non2xx.tsv", ImportOptions{})
	errs := 0
	for _, r := range imp.Requests.Slice() {
		if r.Err || r.Status != 0 {
			errs++
		}
	}
	if len(imp.Requests.Slice()) != 70 || errs != 0 {
		t.Errorf("ab -g: %d requests, %d with a status or error; want 70 and 0 (the rows carry none)", len(imp.Requests.Slice()), errs)
	}
	f, err := os.Open(fixture("ab-non2xx.stdout.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := ParseABSummary(f, "ab-non2xx.stdout.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := ABSummary{Complete: 70, Failed: 0, Non2xx: 22, HasNon2xx: true, TimeTaken: 72 * time.Millisecond}
	if s != want {
		t.Errorf("ParseABSummary: %+v; want %+v", s, want)
	}
	if s.Unplaced() != 22 {
		t.Errorf("unplaced %d, want 22", s.Unplaced())
	}
}

func TestParseABSummaryFailedBreakdown(t *testing.T) {
	// The lines of ab's output for ab-stall.tsv (SOURCE): its "Failed
	// requests" with the breakdown ab prints under it.
	in := "Complete requests:      300\nFailed requests:        150\n   (Connect: 0, Receive: 0, Length: 150, Exceptions: 0)\nTotal transferred:      1 bytes\n"
	s, err := ParseABSummary(strings.NewReader(in), "x")
	if err != nil {
		t.Fatal(err)
	}
	if want := (ABSummary{Complete: 300, Failed: 150, Length: 150}); s != want {
		t.Errorf("%+v; want %+v", s, want)
	}
	if _, err := ParseABSummary(strings.NewReader("starttime\tseconds\n"), "g.tsv"); err == nil {
		t.Error("an ab -g file read as ab's summary")
	}
	if _, err := ParseABSummary(strings.NewReader("Complete requests: x\n"), "y"); err == nil {
		t.Error("a bad count accepted")
	}
}

// FuzzParseABSummary: any text is read without a panic, and no count
// comes out negative.
func FuzzParseABSummary(f *testing.F) {
	if b, err := os.ReadFile(fixture("ab-non2xx.stdout.txt")); err == nil {
		f.Add(string(b))
	}
	f.Add("Failed requests: 3\n   (Connect: 1, Receive: 0, Length: 2, Exceptions: 0)\nComplete requests: 9\n")
	f.Fuzz(func(t *testing.T, in string) {
		s, _ := ParseABSummary(strings.NewReader(in), "fuzz")
		if s.Complete < 0 || s.Failed < 0 || s.Non2xx < 0 || s.Connect < 0 || s.Length < 0 || s.TimeTaken < 0 {
			t.Errorf("negative count: %+v", s)
		}
	})
}
