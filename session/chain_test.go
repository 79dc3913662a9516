package session

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memdiag/memdiag/record"
)

// TestAddChainSourceOff: --ebpf off records the collector as unavailable
// with the reason, loads nothing and adds no source; without the flag
// (commands that lack it) nothing is listed.
func TestAddChainSourceOff(t *testing.T) {
	for _, tc := range []struct {
		ebpf string
		want []record.CollectorStatus
	}{
		{"off", []record.CollectorStatus{{Name: "ebpf-chain", Reason: "off (--ebpf off)"}}},
		{"", nil},
	} {
		o := &Options{Root: "/", EBPF: tc.ebpf}
		h := &record.Header{}
		ws := &Sources{}
		addChainSource(context.Background(), o, h, ws)
		if d := cmp.Diff(tc.want, h.Collectors); d != "" {
			t.Errorf("--ebpf %q: collectors (-want +got):\n%s", tc.ebpf, d)
		}
		if len(ws.List) != 0 || ws.Fatal != nil {
			t.Errorf("--ebpf %q: sources %v, fatal %v; want none", tc.ebpf, ws.List, ws.Fatal)
		}
	}
}
