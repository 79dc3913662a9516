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
// the scrape. The steps: choose a source per family ([hostBuild.pickPSI],
// pickLRU, pickVMStat, pickDisks), say where two clocks meet
// ([hostBuild.noteClocks]), take the header and what memdiag's own
// metrics add ([hostBuild.header]), then build each step's sample
// ([hostBuild.sample]).
func (d *Data) Recording(host string) *Host {
	s := d.Hosts[host]
	h := &Host{Name: host, Memdiag: len(s[exposition.Samples]) > 0}
	b := &hostBuild{h: h, s: s, mine: h.Memdiag, units: sortedKeys(s[exposition.UnitReadBytes]), prevUnit: map[string][2]float64{}}
	b.pickPSI()
	b.pickLRU()
	b.pickVMStat(d)
	b.pickDisks()
	b.noteClocks()
	rec := &record.Recording{Header: b.header(d)}
	lat := d.latencyOf(host)
	for i, t := range d.Times {
		smp := b.sample(i, t)
		smp.Latency = latencyAt(lat, i)
		rec.Samples = append(rec.Samples, smp)
	}
	if len(rec.Samples) > 0 {
		rec.End = &record.End{Type: record.TypeEnd, Time: rec.Samples[len(rec.Samples)-1].Time, Samples: len(rec.Samples), Reason: "prometheus window"}
	}
	h.Rec = rec
	return h
}

// hostBuild is one host's series while [Data.Recording] turns them into
// a recording: the source chosen for each family, and the Host whose
// Sources, Lacks and Notes say what was chosen and what is missing.
//
// One clock per host. memdiag updates its signal counters and its
// per-unit I/O in the same sample, so a unit's I/O falls in the step of
// the stall it caused. node_exporter reads the kernel at its own scrape,
// which Prometheus places anywhere in the interval, and memdiag's values
// are as old as its last sample: the two sources of one host are up to
// about two steps apart, enough to put a short episode's I/O outside it
// and leave the job uncredited. So where memdiag's metrics are scraped
// (mine) its own signals are taken first, and node_exporter's only for a
// family memdiag does not export.
type hostBuild struct {
	h      *Host
	s      Series
	mine   bool     // memdiag's own metrics are scraped for the host
	clocks []string // node_exporter families used beside memdiag's unit I/O

	hostPSI                func(res string, full bool) []float64 // stall totals in seconds; nil: no memory PSI
	lruActive, lruInactive []float64                             // node_exporter's file LRU halves, bytes
	lruTotal               []float64                             // memdiag's file LRU (their sum), bytes
	vmstat                 *vmSeries                             // nil: no vmstat counters
	disks                  []string                              // node_exporter's disk series keys
	mineDisk               bool                                  // memdiag's disk counters (the devices summed)
	units                  []string                              // memdiag's per-unit I/O series keys, sorted
	prevUnit               map[string][2]float64                 // per unit key: bytes read and written at the last step
}

// pickPSI chooses the host's memory PSI: memdiag's, or node_exporter's
// node_pressure_<res>_{waiting,stalled}_seconds_total.
func (b *hostBuild) pickPSI() {
	mdPSI := b.s[exposition.SignalMetric(signal.PSIMemorySome)][hostKey] != nil
	nodePSI := len(b.s["node_pressure_memory_waiting_seconds_total"]) > 0
	switch {
	case mdPSI && (b.mine || !nodePSI):
		b.hostPSI = mineScope(b.s, hostKey)
		b.h.Sources = append(b.h.Sources, "memdiag PSI")
	case nodePSI:
		s := b.s
		b.hostPSI = func(res string, full bool) []float64 {
			kind := "waiting"
			if full {
				kind = "stalled"
			}
			return s["node_pressure_"+res+"_"+kind+"_seconds_total"][""]
		}
		b.h.Sources = append(b.h.Sources, "node_exporter PSI")
		b.clocks = append(b.clocks, "PSI")
	default:
		b.h.Lacks = append(b.h.Lacks, "no memory PSI series (node_pressure_memory_* or memdiag_psi_memory_*): node_exporter's pressure collector needs kernel ≥ 4.20 with PSI; episodes cannot be measured stalls")
	}
}

// pickLRU chooses the file LRU: memdiag's sum, or node_exporter's
// node_memory_{Active,Inactive}_file_bytes.
func (b *hostBuild) pickLRU() {
	active, inactive := b.s["node_memory_Active_file_bytes"][""], b.s["node_memory_Inactive_file_bytes"][""]
	total := b.s[exposition.SignalMetric(signal.FileLRU)][hostKey]
	nodeLRU := active != nil && inactive != nil
	switch {
	case total != nil && (b.mine || !nodeLRU):
		b.lruTotal = total
		b.h.Sources = append(b.h.Sources, "memdiag file LRU")
	case nodeLRU:
		b.lruActive, b.lruInactive = active, inactive
		b.h.Sources = append(b.h.Sources, "node_exporter meminfo")
		b.clocks = append(b.clocks, "file LRU")
	default:
		b.h.Lacks = append(b.h.Lacks, "no file LRU (node_memory_{Active,Inactive}_file_bytes)")
	}
}

// pickVMStat chooses the /proc/vmstat counters ([Data.vmstatSeries]).
func (b *hostBuild) pickVMStat(d *Data) {
	vmstat, note := d.vmstatSeries(b.s, b.mine)
	if note != "" {
		b.h.Lacks = append(b.h.Lacks, note)
	}
	if vmstat != nil {
		b.h.Sources = append(b.h.Sources, vmstat.source)
		if !vmstat.mine {
			b.clocks = append(b.clocks, "vmstat")
		}
	}
	b.vmstat = vmstat
}

// pickDisks chooses the disk counters: memdiag's, summed over the
// devices, or node_exporter's node_disk_* per device.
func (b *hostBuild) pickDisks() {
	disks := sortedKeys(b.s["node_disk_read_bytes_total"])
	mdDisk := b.s[exposition.SignalMetric(signal.DiskRead)][hostKey] != nil
	switch {
	case mdDisk && (b.mine || len(disks) == 0):
		b.mineDisk = true
		b.h.Sources = append(b.h.Sources, "memdiag disk counters")
	case len(disks) > 0:
		b.disks = disks
		b.h.Sources = append(b.h.Sources, "node_exporter diskstats")
		b.clocks = append(b.clocks, "disks")
	default:
		b.h.Lacks = append(b.h.Lacks, "no disk series (node_disk_*): disk I/O and I/O time are unknown")
	}
}

// noteClocks says, where memdiag's metrics are scraped, which families
// came from node_exporter instead and what that costs.
func (b *hostBuild) noteClocks() {
	if b.mine && len(b.clocks) > 0 {
		b.h.Notes = append(b.h.Notes, "memdiag's metrics for this host have no "+strings.Join(b.clocks, ", ")+" series, so node_exporter's are used beside memdiag's per-unit I/O: node_exporter reads the kernel at its own scrape, up to about two steps apart from memdiag's sample, so a short episode may miss the I/O of the job that caused it")
	}
}

// header is the recording's header: the step as interval, the first
// step as start, UTC unless memdiag's host info names the zone; with
// memdiag's metrics the procs collector and the job inventory, without
// them the procs collector unavailable and why.
func (b *hostBuild) header(d *Data) record.Header {
	hdr := record.Header{
		Type: record.TypeHeader, Format: record.FormatName, SchemaVersion: record.SchemaVersion,
		Host: b.h.Name, Interval: d.Step, PageSize: pageSize, TimeZone: "UTC",
		Root: "prometheus:" + d.URL,
	}
	if len(d.Times) > 0 {
		hdr.Start = d.Times[0]
	}
	if !b.mine {
		hdr.Collectors = append(hdr.Collectors, record.CollectorStatus{Name: "procs", Available: false, Reason: "no memdiag metrics for this host"})
		b.h.Lacks = append(b.h.Lacks, "no memdiag metrics (memdiag_unit_*, memdiag_job_*): no per-process or per-unit I/O and no job inventory, so no job or process can be shown to have run or caused an episode; run memdiag with --listen and scrape it")
		return hdr
	}
	b.h.Sources = append(b.h.Sources, "memdiag per-unit I/O, jobs, episodes")
	hdr.Collectors = append(hdr.Collectors, record.CollectorStatus{Name: "procs", Available: true})
	hdr.Jobs = jobsOf(b.s)
	if tz := infoLabel(b.s, exposition.HostInfo, "time_zone"); tz != "" {
		hdr.TimeZone = tz
	}
	b.h.Lacks = append(b.h.Lacks, "per-unit I/O from memdiag's metrics, not per process: processes of one unit are not told apart, and their starts and exits are known only to the scrape interval")
	return hdr
}

// latencyOf is the host's latency series (seconds per step), else the
// one for every host; nil if neither.
func (d *Data) latencyOf(host string) []float64 {
	if v, ok := d.Latency[host]; ok {
		return v
	}
	if v, ok := d.Latency[""]; ok {
		return v
	}
	return nil
}

// latencyAt is the latency at step i of lat (seconds per step) as one
// request's; nil when lat has no value there or a negative one.
func latencyAt(lat []float64, i int) *record.Latency {
	if lat == nil || i >= len(lat) || math.IsNaN(lat[i]) || lat[i] < 0 {
		return nil
	}
	v := time.Duration(lat[i] * float64(time.Second))
	return &record.Latency{Count: 1, Mean: v, P50: v, P95: v, P99: v, Max: v}
}

// sample is the recording's sample at step i (time t): PSI of the host
// and of memdiag's cgroup, file LRU, vmstat, disks and per-unit I/O.
// Steps must come in order: the unit I/O is a delta from the last step.
func (b *hostBuild) sample(i int, t time.Time) record.Sample {
	smp := record.Sample{Type: record.TypeSample, Seq: i, Time: t}
	if b.hostPSI != nil {
		smp.PSI = psiAt(b.hostPSI, i)
	}
	smp.CgroupPSI = psiAt(mineScope(b.s, cgroupKey), i)
	smp.Meminfo = b.meminfoAt(i)
	if b.vmstat != nil {
		smp.VMStat = b.vmstat.at(i)
	}
	smp.Disks = b.disksAt(i)
	smp.Procs = b.unitsAt(i)
	return smp
}

// meminfoAt is the file LRU at step i in bytes; nil when unknown there.
func (b *hostBuild) meminfoAt(i int) *record.Meminfo {
	if b.lruActive != nil && b.lruInactive != nil {
		if a, in := at(b.lruActive, i), at(b.lruInactive, i); !math.IsNaN(a) && !math.IsNaN(in) {
			return &record.Meminfo{ActiveFile: u64(a), InactiveFile: u64(in)}
		}
		return nil
	}
	if v := at(b.lruTotal, i); !math.IsNaN(v) {
		// memdiag exposes the sum; the split is not needed by the signals.
		return &record.Meminfo{ActiveFile: u64(v), InactiveFile: u64(0)}
	}
	return nil
}

// disksAt is the disks at step i: node_exporter's devices with bytes
// read and written and the I/O times (seconds → Duration), or memdiag's
// devices summed as one disk, "all"; a device with either byte count
// unknown there is left out.
func (b *hostBuild) disksAt(i int) []record.Disk {
	var disks []record.Disk
	for _, dev := range b.disks {
		r, w := at(b.s["node_disk_read_bytes_total"][dev], i), at(b.s["node_disk_written_bytes_total"][dev], i)
		if math.IsNaN(r) || math.IsNaN(w) {
			continue
		}
		dk := record.Disk{Name: labelValue(dev, "device"), ReadBytes: uint64(r), WriteBytes: uint64(w)}
		if v := at(b.s["node_disk_io_time_weighted_seconds_total"][dev], i); !math.IsNaN(v) {
			dk.TimeInQueue = time.Duration(v * float64(time.Second))
		}
		if v := at(b.s["node_disk_io_time_seconds_total"][dev], i); !math.IsNaN(v) {
			dk.IOTicks = time.Duration(v * float64(time.Second))
		}
		disks = append(disks, dk)
	}
	if b.mineDisk {
		r, w := at(b.s[exposition.SignalMetric(signal.DiskRead)][hostKey], i), at(b.s[exposition.SignalMetric(signal.DiskWritten)][hostKey], i)
		if !math.IsNaN(r) && !math.IsNaN(w) {
			dk := record.Disk{Name: "all", ReadBytes: uint64(r), WriteBytes: uint64(w)}
			if t := at(b.s[exposition.SignalMetric(signal.DiskIOTime)][hostKey], i); !math.IsNaN(t) {
				dk.TimeInQueue = time.Duration(t * float64(time.Second))
			}
			disks = append(disks, dk)
		}
	}
	return disks
}

// unitsAt is memdiag's per-unit I/O at step i, each unit one "process"
// of the recording: the correlator credits a job through its unit, the
// only link metrics keep. Bytes are the unit's totals and their change
// since the last step; a unit's first value (I/O from before the
// window) and a step without I/O give no process. A counter that went
// back (memdiag restarted) counts from zero.
func (b *hostBuild) unitsAt(i int) []record.ProcIO {
	var procs []record.ProcIO
	for k, key := range b.units {
		r, w := at(b.s[exposition.UnitReadBytes][key], i), at(b.s[exposition.UnitWrittenBytes][key], i)
		if math.IsNaN(r) {
			continue
		}
		if math.IsNaN(w) {
			w = 0
		}
		prev, seen := b.prevUnit[key]
		dr, dw := r, w
		if seen {
			dr, dw = r-prev[0], w-prev[1]
			if dr < 0 || dw < 0 { // memdiag restarted: the counters began again
				dr, dw = r, w
			}
		}
		b.prevUnit[key] = [2]float64{r, w}
		if !seen || (dr == 0 && dw == 0) {
			continue
		}
		unit := labelValue(key, "unit")
		name := unit
		if unit == exposition.NoUnit || unit == exposition.OtherUnit {
			name = "(" + unit + ")"
			unit = ""
		}
		procs = append(procs, record.ProcIO{
			PID: 1_000_000 + k, StartTicks: 1, Comm: name, Cmdline: name, Unit: unit,
			ReadBytes: uint64(r), WriteBytes: uint64(w), DeltaReadBytes: uint64(dr), DeltaWriteBytes: uint64(dw),
		})
	}
	return procs
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
		if x := at(v.vals[k], i); !math.IsNaN(x) && x >= 0 {
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
