package record

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestSampleRSSRoundTrip(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	in := []Sample{
		{Type: TypeSample, Seq: 1, Time: t0, RSS: []ProcRSS{{PID: 7, StartTicks: 9, Comm: "hog", AnonBytes: 4 << 20, FileBytes: 1 << 20}}},
	}
	b, err := json.Marshal(in[0])
	if err != nil {
		t.Fatal(err)
	}
	const want = `"rss":[{"pid":7,"start_ticks":9,"comm":"hog","anon_bytes":4194304,"file_bytes":1048576,"shmem_bytes":0}]`
	if !strings.Contains(string(b), want) {
		t.Errorf("sample JSON %s lacks %s", b, want)
	}
	var back Sample
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(in[0].RSS, back.RSS); d != "" {
		t.Errorf("RSS after a round trip (-want +got):\n%s", d)
	}
}
