package record

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdiag/memdiag/memstate"
)

func TestSampleRSSRoundTrip(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	in := []Sample{
		{Type: TypeSample, Seq: 1, Time: t0, RSS: []memstate.ProcRSS{{PID: 7, StartTicks: 9, Comm: "hog", AnonBytes: 4 << 20, FileBytes: 1 << 20}}},
		{Type: TypeSample, Seq: 2, Time: t0.Add(time.Second)}, // no RSS recorded
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
	got := RSSSamples([]Sample{back, in[1]})
	if d := cmp.Diff([]memstate.RSSSample{{Time: t0, Procs: in[0].RSS}}, got); d != "" {
		t.Errorf("RSSSamples (-want +got):\n%s", d)
	}
}
