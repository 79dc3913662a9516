package fleet

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/memdiag/memdiag/exposition"
	"github.com/memdiag/memdiag/lru"
	"github.com/memdiag/memdiag/psi"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/signal"
	"github.com/memdiag/memdiag/timers"
)

// pageSize is the page size the catalogue's byte counters are turned back
// into pages with; the recording's header says the same, so the
// correlator's pages × PageSize gives the bytes memdiag exposed.
const pageSize = 4096

// Host is one host's data as a recording, with what its sources could
// and could not give.
type Host struct {
	Name string
	Rec  *record.Recording
	// Sources lists the families used ("node_exporter PSI", "memdiag
	// per-unit I/O"); Lacks what the correlator will not have, said
	// plainly; Notes what limits the analysis of what it has.
	Sources, Lacks, Notes []string
	// Memdiag is true when memdiag's own metrics were scraped for it.
	Memdiag bool
}

// Recording turns host's series into a recording the correlator reads:
// one sample per step, counters as the kernel would have given them at
// the scrape.
func (d *Data) Recording(host string) *Host {
	s := d.Hosts[host]
	h := &Host{Name: host}
	hdr := record.Header{
		Type: record.TypeHeader, Format: record.FormatName, SchemaVersion: record.SchemaVersion,
		Host: host, Interval: d.Step, PageSize: pageSize, TimeZone: "UTC",
		Root: "prometheus:" + d.URL,
	}
	if len(d.Times) > 0 {
		hdr.Start = d.Times[0]
	}
	has := func(name string) bool { return len(s[name]) > 0 }
	mine := has(exposition.Samples)
	h.Memdiag = mine
	// One clock per host. memdiag updates its signal counters and its
	// per-unit I/O in the same sample, so a unit's I/O falls in the step
	// of the stall it caused. node_exporter reads the kernel at its own
	// scrape, which Prometheus places anywhere in the interval, and
	// memdiag's values are as old as its last sample: the two sources
	// of one host are up to about two steps apart, enough to put a short
	// episode's I/O outside it and leave the job uncredited. So where
	// memdiag's metrics are scraped its own signals are taken first, and
	// node_exporter's only for a family memdiag does not export.
	var clocks []string // node_exporter families used beside memdiag's unit I/O
	mdPSI := s[exposition.SignalMetric(signal.PSIMemorySome)][hostKey] != nil
	nodePSI := has("node_pressure_memory_waiting_seconds_total")
	var hostPSI func(res string, full bool) []float64
	switch {
	case mdPSI && (mine || !nodePSI):
		hostPSI = mineScope(s, hostKey)
		h.Sources = append(h.Sources, "memdiag PSI")
	case nodePSI:
		hostPSI = func(res string, full bool) []float64 {
			kind := "waiting"
			if full {
				kind = "stalled"
			}
			return s["node_pressure_"+res+"_"+kind+"_seconds_total"][""]
		}
		h.Sources = append(h.Sources, "node_exporter PSI")
		clocks = append(clocks, "PSI")
	default:
		h.Lacks = append(h.Lacks, "no memory PSI series (node_pressure_memory_* or memdiag_psi_memory_*): node_exporter's pressure collector needs kernel ≥ 4.20 with PSI; episodes cannot be measured stalls")
	}
	lruActive, lruInactive := s["node_memory_Active_file_bytes"][""], s["node_memory_Inactive_file_bytes"][""]
	lruTotal := s[exposition.SignalMetric(signal.FileLRU)][hostKey]
	nodeLRU := lruActive != nil && lruInactive != nil
	switch {
	case lruTotal != nil && (mine || !nodeLRU):
		lruActive, lruInactive = nil, nil
		h.Sources = append(h.Sources, "memdiag file LRU")
	case nodeLRU:
		lruTotal = nil
		h.Sources = append(h.Sources, "node_exporter meminfo")
		clocks = append(clocks, "file LRU")
	default:
		h.Lacks = append(h.Lacks, "no file LRU (node_memory_{Active,Inactive}_file_bytes)")
	}
	vmstat, vmNote := d.vmstatSeries(s, mine)
	if vmNote != "" {
		h.Lacks = append(h.Lacks, vmNote)
	}
	if vmstat != nil {
		h.Sources = append(h.Sources, vmstat.source)
		if !vmstat.mine {
			clocks = append(clocks, "vmstat")
		}
	}
	disks := sortedKeys(s["node_disk_read_bytes_total"])
	mdDisk := s[exposition.SignalMetric(signal.DiskRead)][hostKey] != nil
	mineDisk := false
	switch {
	case mdDisk && (mine || len(disks) == 0):
		disks, mineDisk = nil, true
		h.Sources = append(h.Sources, "memdiag disk counters")
	case len(disks) > 0:
		h.Sources = append(h.Sources, "node_exporter diskstats")
		clocks = append(clocks, "disks")
	default:
		h.Lacks = append(h.Lacks, "no disk series (node_disk_*): disk I/O and I/O time are unknown")
	}
	if mine && len(clocks) > 0 {
		h.Notes = append(h.Notes, "memdiag's metrics for this host have no "+strings.Join(clocks, ", ")+" series, so node_exporter's are used beside memdiag's per-unit I/O: node_exporter reads the kernel at its own scrape, up to about two steps apart from memdiag's sample, so a short episode may miss the I/O of the job that caused it")
	}
	units := sortedKeys(s[exposition.UnitReadBytes])
	if mine {
		h.Sources = append(h.Sources, "memdiag per-unit I/O, jobs, episodes")
		hdr.Collectors = append(hdr.Collectors, record.CollectorStatus{Name: "procs", Available: true})
		hdr.Jobs = jobsOf(s)
		if tz := infoLabel(s, exposition.HostInfo, "time_zone"); tz != "" {
			hdr.TimeZone = tz
		}
		h.Lacks = append(h.Lacks, "per-unit I/O from memdiag's metrics, not per process: processes of one unit are not told apart, and their starts and exits are known only to the scrape interval")
	} else {
		hdr.Collectors = append(hdr.Collectors, record.CollectorStatus{Name: "procs", Available: false, Reason: "no memdiag metrics for this host"})
		h.Lacks = append(h.Lacks, "no memdiag metrics (memdiag_unit_*, memdiag_job_*): no per-process or per-unit I/O and no job inventory, so no job or process can be shown to have run or caused an episode; run memdiag with --listen and scrape it")
	}
	var lat []float64
	if v, ok := d.Latency[host]; ok {
		lat = v
	} else if v, ok := d.Latency[""]; ok {
		lat = v
	}

	rec := &record.Recording{Header: hdr}
	prevUnit := map[string][2]float64{}
	for i, t := range d.Times {
		smp := record.Sample{Type: record.TypeSample, Seq: i, Time: t}
		if hostPSI != nil {
			smp.PSI = psiAt(hostPSI, i)
		}
		smp.CgroupPSI = psiAt(mineScope(s, cgroupKey), i)
		if lruActive != nil && lruInactive != nil {
			if a, b := lruActive[i], lruInactive[i]; !math.IsNaN(a) && !math.IsNaN(b) {
				smp.Meminfo = &record.Meminfo{ActiveFile: u64(a), InactiveFile: u64(b)}
			}
		} else if lruTotal != nil && !math.IsNaN(lruTotal[i]) {
			// memdiag exposes the sum; the split is not needed by the signals.
			smp.Meminfo = &record.Meminfo{ActiveFile: u64(lruTotal[i]), InactiveFile: u64(0)}
		}
		if vmstat != nil {
			smp.VMStat = vmstat.at(i)
		}
		for _, dev := range disks {
			r, w := at(s["node_disk_read_bytes_total"][dev], i), at(s["node_disk_written_bytes_total"][dev], i)
			if math.IsNaN(r) || math.IsNaN(w) {
				continue
			}
			dk := record.Disk{Name: labelValue(dev, "device"), ReadBytes: uint64(r), WriteBytes: uint64(w)}
			if v := s["node_disk_io_time_weighted_seconds_total"][dev]; v != nil && !math.IsNaN(v[i]) {
				dk.TimeInQueue = time.Duration(v[i] * float64(time.Second))
			}
			if v := s["node_disk_io_time_seconds_total"][dev]; v != nil && !math.IsNaN(v[i]) {
				dk.IOTicks = time.Duration(v[i] * float64(time.Second))
			}
			smp.Disks = append(smp.Disks, dk)
		}
		if mineDisk {
			// memdiag's counters sum the devices: one disk, "all".
			r, w := at(s[exposition.SignalMetric(signal.DiskRead)][hostKey], i), at(s[exposition.SignalMetric(signal.DiskWritten)][hostKey], i)
			if !math.IsNaN(r) && !math.IsNaN(w) {
				dk := record.Disk{Name: "all", ReadBytes: uint64(r), WriteBytes: uint64(w)}
				if t := at(s[exposition.SignalMetric(signal.DiskIOTime)][hostKey], i); !math.IsNaN(t) {
					dk.TimeInQueue = time.Duration(t * float64(time.Second))
				}
				smp.Disks = append(smp.Disks, dk)
			}
		}
		// Each unit is one "process" of the recording: the correlator
		// credits a job through its unit, the only link metrics keep.
		for k, key := range units {
			r, w := at(s[exposition.UnitReadBytes][key], i), at(s[exposition.UnitWrittenBytes][key], i)
			if math.IsNaN(r) {
				continue
			}
			if math.IsNaN(w) {
				w = 0
			}
			unit := labelValue(key, "unit")
			prev, seen := prevUnit[key]
			dr, dw := r, w
			if seen {
				dr, dw = r-prev[0], w-prev[1]
				if dr < 0 || dw < 0 { // memdiag restarted: the counters began again
					dr, dw = r, w
				}
			}
			prevUnit[key] = [2]float64{r, w}
			if !seen {
				continue // the first value holds I/O from before the window
			}
			if dr == 0 && dw == 0 {
				continue
			}
			name := unit
			if unit == exposition.NoUnit || unit == exposition.OtherUnit {
				name = "(" + unit + ")"
				unit = ""
			}
			smp.Procs = append(smp.Procs, record.ProcIO{
				PID: 1_000_000 + k, StartTicks: 1, Comm: name, Cmdline: name, Unit: unit,
				ReadBytes: uint64(r), WriteBytes: uint64(w), DeltaReadBytes: uint64(dr), DeltaWriteBytes: uint64(dw),
			})
		}
		if lat != nil && i < len(lat) && !math.IsNaN(lat[i]) && lat[i] >= 0 {
			v := time.Duration(lat[i] * float64(time.Second))
			smp.Latency = &record.Latency{Count: 1, Mean: v, P50: v, P95: v, P99: v, Max: v}
		}
		rec.Samples = append(rec.Samples, smp)
	}
	if len(rec.Samples) > 0 {
		rec.End = &record.End{Type: record.TypeEnd, Time: rec.Samples[len(rec.Samples)-1].Time, Samples: len(rec.Samples), Reason: "prometheus window"}
	}
	h.Rec = rec
	return h
}

// at is v[i], NaN when the series or the point is missing.
func at(v []float64, i int) float64 {
	if i < 0 || i >= len(v) {
		return math.NaN()
	}
	return v[i]
}

func u64(v float64) *uint64 {
	x := uint64(max(v, 0))
	return &x
}

// The label sets of memdiag's catalogue metrics, by scope.
const (
	hostKey   = `scope="host"`
	cgroupKey = `scope="cgroup"`
)

// mineScope looks up memdiag's PSI series of one scope.
func mineScope(s Series, key string) func(res string, full bool) []float64 {
	return func(res string, full bool) []float64 {
		for _, sig := range signal.Catalogue {
			if sig.PSI != nil && sig.PSI.Resource == res && sig.PSI.Full == full {
				return s[exposition.SignalMetric(sig)][key]
			}
		}
		return nil
	}
}

// psiAt is the PSI snapshot at step i from the totals get returns (in
// seconds); nil when memory has no value there.
func psiAt(get func(res string, full bool) []float64, i int) *record.PSI {
	line := func(res string, full bool) (psi.Line, bool) {
		v := at(get(res, full), i)
		if math.IsNaN(v) {
			return psi.Line{}, false
		}
		return psi.Line{Total: time.Duration(v * float64(time.Second))}, true
	}
	var snap psi.Snapshot
	for _, res := range psi.Resources {
		some, ok := line(res, false)
		if !ok {
			continue
		}
		r := &psi.Resource{Some: some}
		if full, ok := line(res, true); ok {
			r.Full = &full
		}
		snap.Set(res, r)
	}
	if snap.Memory == nil {
		return nil
	}
	return record.FromPSI(&snap)
}

// vmSeries is the /proc/vmstat counters of a host, from node_exporter's
// node_vmstat_<counter> (mapped across kernels by package lru, exactly as
// a recording's) or, failing that, from memdiag's catalogue counters.
type vmSeries struct {
	source string
	names  []string
	vals   [][]float64
	mine   bool
}

// vmstatSeries takes memdiag's counters first when preferMine (memdiag's
// metrics are scraped for the host: one clock with its unit I/O),
// node_exporter's first otherwise; the note says what is missing.
func (d *Data) vmstatSeries(s Series, preferMine bool) (*vmSeries, string) {
	node, nodeNote := nodeVMStat(s)
	mine := mineVMStat(s)
	switch {
	case mine != nil && (preferMine || node == nil || nodeNote != ""):
		return mine, ""
	case node != nil:
		return node, nodeNote
	}
	return nil, "no vmstat series (node_vmstat_* or memdiag's signal counters): reclaim, refaults and swap are unknown"
}

// nodeVMStat is node_exporter's node_vmstat_<counter> series, nil if
// none; the note names the reclaim and refault counters it lacks.
func nodeVMStat(s Series) (*vmSeries, string) {
	vs := &vmSeries{source: "node_exporter vmstat"}
	for name, byKey := range s {
		if c, ok := strings.CutPrefix(name, "node_vmstat_"); ok && byKey[""] != nil {
			vs.names = append(vs.names, c)
			vs.vals = append(vs.vals, byKey[""])
		}
	}
	if len(vs.names) == 0 {
		return nil, ""
	}
	var missing []string
	for _, c := range []string{"pgscan_direct", "workingset_refault_file", "pswpout"} {
		if _, ok := s["node_vmstat_"+c]; !ok {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return vs, "node_exporter's vmstat collector did not export " + strings.Join(missing, ", ") +
			": its default --collector.vmstat.fields keeps only faults and swap; add pgscan_.*|workingset_.* (docs/fleet.md), else direct reclaim and refaults are unknown"
	}
	return vs, ""
}

// mineVMStat is memdiag's catalogue counters as vmstat counters, in
// pages (bytes ÷ page size) or events; nil if none.
func mineVMStat(s Series) *vmSeries {
	vs := &vmSeries{source: "memdiag signal counters", mine: true}
	back := map[*signal.Signal]string{
		signal.DirectReclaim: "pgscan_direct", signal.KswapdReclaim: "pgscan_kswapd",
		signal.RefaultFile: "workingset_refault_file", signal.RefaultAnon: "workingset_refault_anon",
		signal.WorkingsetActivate: "workingset_activate", signal.MajorFaults: "pgmajfault",
		signal.Allocstalls: "allocstall", signal.SwapIn: "pswpin", signal.SwapOut: "pswpout", signal.OOMKills: "oom_kill",
	}
	for _, sig := range signal.Catalogue {
		c, ok := back[sig]
		v := s[exposition.SignalMetric(sig)][hostKey]
		if !ok || v == nil {
			continue
		}
		if sig.Unit == signal.Pages {
			pages := make([]float64, len(v))
			for i, x := range v {
				pages[i] = math.Round(x / pageSize)
			}
			v = pages
		}
		vs.names = append(vs.names, c)
		vs.vals = append(vs.vals, v)
	}
	if len(vs.names) == 0 {
		return nil
	}
	return vs
}

// at is the VMStat at step i, parsed by lru from the text /proc/vmstat
// would have held, so kernel spellings map as they do for a recording.
func (v *vmSeries) at(i int) *record.VMStat {
	var b strings.Builder
	for k, name := range v.names {
		if x := v.vals[k][i]; !math.IsNaN(x) && x >= 0 {
			fmt.Fprintf(&b, "%s %d\n", name, uint64(x))
		}
	}
	if b.Len() == 0 {
		return nil
	}
	vm, err := lru.ParseVMStat(strings.NewReader(b.String()), "prometheus")
	if err != nil {
		return nil
	}
	return record.FromVMStat(vm)
}

// jobsOf rebuilds the periodic-job inventory from memdiag_job_info and
// memdiag_job_period_seconds.
func jobsOf(s Series) []record.Job {
	var jobs []record.Job
	for _, key := range sortedKeys(s[exposition.JobInfo]) {
		j := record.Job{
			Name:   labelValue(key, exposition.JobLabel),
			Source: timers.Source(labelValue(key, "source")),
			Unit:   labelValue(key, "unit"),
			// active="false": a job that will not run; older exporters
			// had no active label and listed only jobs that run.
			Active: labelValue(key, "active") != "false",
		}
		if sch := labelValue(key, "schedule"); sch != "" {
			j.Schedule = strings.Split(sch, "; ")
		}
		for pk, v := range s[exposition.JobPeriod] {
			if labelValue(pk, exposition.JobLabel) == j.Name {
				for _, x := range v {
					if !math.IsNaN(x) {
						p := x
						j.PeriodSeconds = &p
						break
					}
				}
			}
		}
		jobs = append(jobs, j)
	}
	return jobs
}

// infoLabel is label l of the first series of an info metric.
func infoLabel(s Series, metric, l string) string {
	for _, k := range sortedKeys(s[metric]) {
		if v := labelValue(k, l); v != "" {
			return v
		}
	}
	return ""
}

var labelRe = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)=("(?:[^"\\]|\\.)*")`)

// labelValue is label l of a labelsKey, "" when absent.
func labelValue(key, l string) string {
	for _, m := range labelRe.FindAllStringSubmatch(key, -1) {
		if m[1] == l {
			v, err := strconv.Unquote(m[2])
			if err != nil {
				return ""
			}
			return v
		}
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
