package exposition

import (
	"bytes"
	"os"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sys/unix"
)

// selfCollector serves memdiag's own process_* metrics — the names, help,
// types and values of client_golang's process collector
// (collectors.NewProcessCollector, procfs) — for a fraction of its cost.
// That collector was 43 % of rendering /metrics (BenchmarkScrape/render):
// each scrape it parsed the whole /proc/stat with fmt.Sscanf for the
// boot time, /proc/self/limits with a regular expression per line, and
// every field of /proc/self/net/netstat into floats, for one value each.
// Here: /proc/self/stat (utime, stime, starttime, vsize, rss), the btime
// line of /proc/stat, getrlimit(2) for the soft limits /proc/self/limits
// shows, the size of /proc/self/fd (the fd count since Linux 6.2, else
// its entries counted, as procfs does), and the IpExt octets of
// /proc/self/net/netstat. A value that cannot be read is left out, as
// that collector does (its errors are not reported either).
type selfCollector struct {
	proc string // the procfs mount: /proc
}

// userHZ is the clock tick of /proc/PID/stat's times (procfs assumes 100
// as well: USER_HZ is 100 on every Linux ABI Go supports).
const userHZ = 100

var (
	selfCPU       = prometheus.NewDesc("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", nil, nil)
	selfOpenFDs   = prometheus.NewDesc("process_open_fds", "Number of open file descriptors.", nil, nil)
	selfMaxFDs    = prometheus.NewDesc("process_max_fds", "Maximum number of open file descriptors.", nil, nil)
	selfVsize     = prometheus.NewDesc("process_virtual_memory_bytes", "Virtual memory size in bytes.", nil, nil)
	selfMaxVsize  = prometheus.NewDesc("process_virtual_memory_max_bytes", "Maximum amount of virtual memory available in bytes.", nil, nil)
	selfRSS       = prometheus.NewDesc("process_resident_memory_bytes", "Resident memory size in bytes.", nil, nil)
	selfStartTime = prometheus.NewDesc("process_start_time_seconds", "Start time of the process since unix epoch in seconds.", nil, nil)
	selfNetIn     = prometheus.NewDesc("process_network_receive_bytes_total", "Number of bytes received by the process over the network.", nil, nil)
	selfNetOut    = prometheus.NewDesc("process_network_transmit_bytes_total", "Number of bytes sent by the process over the network.", nil, nil)
)

func (c selfCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{selfCPU, selfOpenFDs, selfMaxFDs, selfVsize, selfMaxVsize, selfRSS, selfStartTime, selfNetIn, selfNetOut} {
		ch <- d
	}
}

func (c selfCollector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64) { ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v) }
	counter := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v)
	}
	if st, ok := readSelfStat(c.proc + "/self/stat"); ok {
		counter(selfCPU, float64(st.utime+st.stime)/userHZ)
		gauge(selfVsize, float64(st.vsize))
		gauge(selfRSS, float64(st.rss*uint64(os.Getpagesize())))
		if b, err := os.ReadFile(c.proc + "/stat"); err == nil {
			if bt, ok := btime(b); ok {
				gauge(selfStartTime, float64(bt)+float64(st.starttime)/userHZ)
			}
		}
	}
	if n, ok := openFDs(c.proc + "/self/fd"); ok {
		gauge(selfOpenFDs, float64(n))
	}
	var nofile, as unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &nofile) == nil && unix.Getrlimit(unix.RLIMIT_AS, &as) == nil {
		gauge(selfMaxFDs, float64(nofile.Cur))
		gauge(selfMaxVsize, float64(as.Cur))
	}
	if b, err := os.ReadFile(c.proc + "/self/net/netstat"); err == nil {
		if in, out, ok := ipExtOctets(b); ok {
			counter(selfNetIn, in)
			counter(selfNetOut, out)
		}
	}
}

type selfStat struct{ utime, stime, starttime, vsize, rss uint64 }

// readSelfStat reads fields 14, 15 (utime, stime, clock ticks), 22
// (starttime, ticks after boot), 23 (vsize, bytes) and 24 (rss, pages)
// of a /proc/PID/stat (proc(5)); the command name, field 2, may hold
// spaces and parentheses, so fields are counted after its last ')'.
func readSelfStat(path string) (selfStat, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return selfStat{}, false
	}
	return parseSelfStat(b)
}

func parseSelfStat(b []byte) (st selfStat, ok bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return st, false
	}
	f := bytes.Fields(b[i+1:]) // f[0] is field 3 (state)
	if len(f) < 22 {
		return st, false
	}
	for _, x := range []struct {
		field int
		v     *uint64
	}{{14, &st.utime}, {15, &st.stime}, {22, &st.starttime}, {23, &st.vsize}, {24, &st.rss}} {
		v, err := strconv.ParseUint(string(f[x.field-3]), 10, 64)
		if err != nil {
			return st, false
		}
		*x.v = v
	}
	return st, true
}

// btime is the boot time (Unix seconds) of /proc/stat's "btime" line.
func btime(b []byte) (uint64, bool) {
	for line := range bytes.Lines(b) {
		if v, found := bytes.CutPrefix(line, []byte("btime ")); found {
			n, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// openFDs counts the entries of /proc/self/fd: the directory's size where
// the kernel gives it (Linux 6.2 and later), else its names.
func openFDs(dir string) (int, bool) {
	if fi, err := os.Stat(dir); err == nil && fi.Size() > 0 {
		return int(fi.Size()), true
	}
	d, err := os.Open(dir)
	if err != nil {
		return 0, false
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	return len(names), err == nil
}

// ipExtOctets returns InOctets and OutOctets of the IpExt lines of a
// /proc/PID/net/netstat: pairs of lines, names then values, each line
// led by its protocol ("IpExt:"). As procfs does, a pair whose counts
// differ fails the whole file, and a counter the kernel lacks is 0.
func ipExtOctets(b []byte) (in, out float64, ok bool) {
	var names []byte
	n := 0
	for line := range bytes.Lines(b) {
		line = bytes.TrimRight(line, "\n")
		n++
		if n%2 == 1 {
			names = line
			continue
		}
		nf, vf := bytes.Split(names, []byte(" ")), bytes.Split(line, []byte(" "))
		if len(nf) != len(vf) {
			return 0, 0, false
		}
		if string(nf[0]) != "IpExt:" {
			continue
		}
		for i := 1; i < len(nf); i++ {
			var dst *float64
			switch string(nf[i]) {
			case "InOctets":
				dst = &in
			case "OutOctets":
				dst = &out
			default:
				continue
			}
			v, err := strconv.ParseFloat(string(vf[i]), 64)
			if err != nil {
				return 0, 0, false
			}
			*dst = v
		}
	}
	return in, out, true
}
