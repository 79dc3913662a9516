package report

import (
	"strings"
	"testing"

	"github.com/memdiag/memdiag/correlate"
)

// TestProcessAdviceBandwidthLimit: a recurring process that mostly read
// (a scan, a backup's source) is told to cap its reads
// (IOReadBandwidthMax=), one that mostly wrote its writes. A new user's
// trial found IOWriteBandwidthMax= advised to a job that only read.
func TestProcessAdviceBandwidthLimit(t *testing.T) {
	for _, tc := range []struct {
		read, written uint64
		want, not     string
	}{
		{256 << 20, 0, "IOReadBandwidthMax=", "IOWriteBandwidthMax="},
		{1 << 20, 300 << 20, "IOWriteBandwidthMax=", "IOReadBandwidthMax="},
	} {
		c := &correlate.Culprit{Name: "nightly-backup.sh", Kind: correlate.KindProcess,
			Processes: []correlate.ProcActivity{{Comm: "cat", ReadBytes: tc.read, WriteBytes: tc.written}}}
		got := strings.Join(ioAdvice(c), "\n")
		if !strings.Contains(got, tc.want) || strings.Contains(got, tc.not) {
			t.Errorf("read %d, written %d: advice %q; want %s, not %s", tc.read, tc.written, got, tc.want, tc.not)
		}
	}
}
