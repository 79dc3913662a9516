package exposition

import (
	"math"
	"os"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	dto "github.com/prometheus/client_model/go"
)

// gatherOne gathers c alone: family name → family.
func gatherOne(t *testing.T, c prometheus.Collector) map[string]*dto.MetricFamily {
	t.Helper()
	r := prometheus.NewRegistry()
	r.MustRegister(c)
	mfs, err := r.Gather()
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]*dto.MetricFamily{}
	for _, mf := range mfs {
		m[mf.GetName()] = mf
	}
	return m
}

func familyValue(mf *dto.MetricFamily) float64 {
	m := mf.GetMetric()[0]
	if c := m.GetCounter(); c != nil {
		return c.GetValue()
	}
	return m.GetGauge().GetValue()
}

// TestSelfCollectorServesWhatClientGolangDoes gathers this process's
// process_* metrics from selfCollector and from client_golang's process
// collector, which /metrics served before: the same families, help and
// types, and the same values — equal for those that do not move while
// the test runs, within a small margin for CPU, memory, descriptors and
// network bytes, which may between the two reads.
func TestSelfCollectorServesWhatClientGolangDoes(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	want := gatherOne(t, collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	got := gatherOne(t, selfCollector{proc: "/proc"})
	if len(want) < 7 {
		t.Fatalf("client_golang served %d process families here, want 7 or more", len(want))
	}
	if len(got) != len(want) {
		t.Errorf("%d families, client_golang %d", len(got), len(want))
	}
	margin := map[string]float64{
		"process_cpu_seconds_total":            0.05,
		"process_resident_memory_bytes":        4 << 20,
		"process_virtual_memory_bytes":         64 << 20,
		"process_open_fds":                     4,
		"process_network_receive_bytes_total":  1 << 20,
		"process_network_transmit_bytes_total": 1 << 20,
	}
	for name, w := range want {
		g := got[name]
		if g == nil {
			t.Errorf("%s: missing", name)
			continue
		}
		if g.GetHelp() != w.GetHelp() || g.GetType() != w.GetType() {
			t.Errorf("%s: help %q type %v, client_golang %q %v", name, g.GetHelp(), g.GetType(), w.GetHelp(), w.GetType())
		}
		gv, wv := familyValue(g), familyValue(w)
		if d := math.Abs(gv - wv); d > margin[name] {
			t.Errorf("%s = %v, client_golang %v (margin %v)", name, gv, wv, margin[name])
		}
		if name == "process_start_time_seconds" && wv < 1e9 {
			t.Errorf("start time %v: not a Unix time", wv)
		}
	}
}

func TestParseSelfStat(t *testing.T) {
	// A comm with a space and a parenthesis, from a real /proc/PID/stat (fields 1-24).
	b := []byte("4242 (a b) c) S 1 4242 4242 0 -1 4194560 1034 0 0 0 12 7 0 0 20 0 9 0 56789 1252855808 5021 18446744073709551615\n")
	st, ok := parseSelfStat(b)
	if !ok || st.utime != 12 || st.stime != 7 || st.starttime != 56789 || st.vsize != 1252855808 || st.rss != 5021 {
		t.Errorf("%+v %v", st, ok)
	}
	for _, bad := range []string{"", "4242 (x", "4242 (x) S 1 2 3", "4242 (x) S 1 4242 4242 0 -1 4194560 1034 0 0 0 1x 7 0 0 20 0 9 0 56789 1252855808 5021 0"} {
		if _, ok := parseSelfStat([]byte(bad)); ok {
			t.Errorf("%q: parsed", bad)
		}
	}
}

func TestIPExtOctets(t *testing.T) {
	nets := "TcpExt: SyncookiesSent SyncookiesRecv\nTcpExt: 0 0\nIpExt: InNoRoutes InOctets OutOctets\nIpExt: 0 123456 7890\n"
	in, out, ok := ipExtOctets([]byte(nets))
	if !ok || in != 123456 || out != 7890 {
		t.Errorf("in %v out %v ok %v", in, out, ok)
	}
	if _, _, ok := ipExtOctets([]byte("IpExt: InOctets OutOctets\nIpExt: 1\n")); ok {
		t.Error("a pair of different counts parsed")
	}
	if in, out, ok := ipExtOctets([]byte("TcpExt: A\nTcpExt: 1\n")); !ok || in != 0 || out != 0 {
		t.Errorf("no IpExt: %v %v %v, want 0 0 true (procfs's)", in, out, ok)
	}
	if bt, ok := btime([]byte("cpu  1 2 3\nbtime 1765000000\nprocesses 9\n")); !ok || bt != 1765000000 {
		t.Errorf("btime %v %v", bt, ok)
	}
}

// FuzzSelfParsers: no /proc/self/stat, /proc/stat or netstat text panics
// the parsers.
func FuzzSelfParsers(f *testing.F) {
	for _, p := range []string{"/proc/self/stat", "/proc/stat", "/proc/self/net/netstat"} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("IpExt: InOctets\nIpExt: 1"))
	f.Fuzz(func(t *testing.T, b []byte) {
		parseSelfStat(b)
		btime(b)
		ipExtOctets(b)
	})
}

// BenchmarkSelfCollector is one scrape's process_* metrics, from
// selfCollector and from client_golang's process collector, gathered
// alone.
//
//	go test ./exposition -run XXX -bench SelfCollector -benchmem
func BenchmarkSelfCollector(b *testing.B) {
	for _, c := range []struct {
		name string
		c    prometheus.Collector
	}{{"memdiag", selfCollector{proc: "/proc"}}, {"client_golang", collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})}} {
		r := prometheus.NewRegistry()
		r.MustRegister(c.c)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.Gather(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
