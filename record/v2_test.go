package record

import (
	"testing"
	"time"
)

// TestFrozenV2Recording decodes the frozen schema-2 recording
// (testdata/v2/SOURCE says how it was taken) field by field: the victim
// found from --probe and the page-cache chain, as read off the file
// with jq by hand.
func TestFrozenV2Recording(t *testing.T) {
	rec, err := ReadFile("testdata/v2/watch-6.18-victim-chain.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	h := rec.Header
	v := h.Victim
	if h.SchemaVersion != 2 || v == nil || v.PID != 22240 || v.Comm != "websvc" || v.How != VictimFromProbe ||
		v.Cgroup != "/memdiag-v2-fixture" || v.Memcg != "/memdiag-v2-fixture" || v.Limit != "/memdiag-v2-fixture" || v.LimitBytes != 160<<20 {
		t.Fatalf("header schema %d, victim %+v", h.SchemaVersion, v)
	}
	if len(rec.Samples) != 5 || rec.End == nil || rec.End.Samples != 5 {
		t.Fatalf("%d samples, end %+v; want 5 and an end line", len(rec.Samples), rec.End)
	}
	adds := []int{1, 9, 11, 20, 10}
	for i, s := range rec.Samples {
		if s.Chain == nil || len(s.Chain.Adds) != adds[i] || len(s.Chain.Untraced) != 1 || s.Chain.Untraced[0] != "refaults" {
			t.Errorf("sample %d: chain %+v; want %d adds, refaults untraced", i, s.Chain, adds[i])
		}
	}
	ch := rec.Samples[2].Chain
	want := []ChainEviction{
		{Memcg: "/memdiag-v2-fixture", Reclaimer: ReclaimMemcg, PID: 22401, Comm: "hog", Cgroup: "/memdiag-v2-fixture", ReclMemcg: "/memdiag-v2-fixture", Bytes: 654577664},
		{Memcg: "/memdiag-v2-fixture", Reclaimer: ReclaimMemcg, PID: 22240, Comm: "websvc", Cgroup: "/memdiag-v2-fixture", ReclMemcg: "/memdiag-v2-fixture", Bytes: 4194304},
	}
	if len(ch.Evictions) != 2 || ch.Evictions[0] != want[0] || ch.Evictions[1] != want[1] {
		t.Errorf("sample 2 evictions %+v, want %+v", ch.Evictions, want)
	}
	if a := ch.Adds[0]; a.PID != 22401 || a.Comm != "hog" || a.Memcg != "/memdiag-v2-fixture" || a.Bytes != 939524096 {
		t.Errorf("sample 2 first add %+v", a)
	}
	if len(ch.Stalls) != 2 || ch.Stalls[0].PID != 22401 || ch.Stalls[0].Limit != 168591551*time.Nanosecond || ch.Stalls[1].Limit != 95819*time.Nanosecond {
		t.Errorf("sample 2 stalls %+v", ch.Stalls)
	}
}
