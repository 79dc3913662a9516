package memstate

import (
	"encoding/binary"
	"math"
	"sort"
	"time"

	"github.com/memdiag/memdiag/process"
)

// ProcRSS is one process's RSS split into anon, file and shmem at one
// sample: `memdiag watch` records, each interval, the top processes by
// RSS and every process whose RSS is growing (diskio.ProcScanner.RSS,
// which ranks and notices growth by the resident pages it already reads
// from /proc/PID/stat and reads /proc/PID/status only for those few).
type ProcRSS = process.RSS

// GrowthOptions say when steady growth is reported.
type GrowthOptions struct {
	MinObserved time.Duration // the process must be seen at least this long
	MinPoints   int           // and in at least this many samples
	MinR2       float64       // the linear fit must explain this share of the variance (0..1): steady, not a step
	MinSlope    float64       // MiB/h of anon growth
	MinIncrease uint64        // bytes of anon growth over the observation, to ignore page-level jitter
}

// MinGrowthWindow is the shortest observation from which steady growth is
// reported: 10 minutes. Over a shorter window a straight line of RSS is
// mostly a process filling its working set (start-up, a compile, a batch
// step, a cache warming); a rate per hour extrapolated from seconds of it
// (a 20 s compiler "growing 14370 MiB/h") says nothing about a leak.
// Ten minutes outlasts start-up and most build steps while staying within
// one `memdiag watch` session.
const MinGrowthWindow = 10 * time.Minute

// DefaultGrowthOptions flag a process whose anon memory grew by at least
// 1 MiB at 1 MiB/h or more, on a straight line (R² ≥ 0.9), over at least
// MinGrowthWindow and 5 samples.
func DefaultGrowthOptions() GrowthOptions {
	return GrowthOptions{MinObserved: MinGrowthWindow, MinPoints: 5, MinR2: 0.9, MinSlope: 1, MinIncrease: 1 << 20}
}

// ProcGrowth is the fitted growth of one process's memory.
type ProcGrowth struct {
	PID        int    `json:"pid"`
	StartTicks uint64 `json:"start_ticks"`
	Comm       string `json:"comm"`

	First    time.Time     `json:"first"`
	Last     time.Time     `json:"last"`
	Observed time.Duration `json:"observed_ns"`
	Points   int           `json:"points"`

	AnonFirstBytes uint64 `json:"anon_first_bytes"`
	AnonLastBytes  uint64 `json:"anon_last_bytes"`
	// AnonSlope is the least-squares slope of RssAnon over time in MiB/h;
	// AnonR2 the fit's coefficient of determination (0..1; 0 when flat).
	AnonSlope float64 `json:"anon_slope_mib_per_h"`
	AnonR2    float64 `json:"anon_r2"`
	// RSSSlope and RSSR2 are the same for anon+file+shmem.
	RSSSlope float64 `json:"rss_slope_mib_per_h"`
	RSSR2    float64 `json:"rss_r2"`
	// RssFile and RssShmem at the first and last sample, beside the anon
	// figures: which kind of memory grew.
	FileFirstBytes  uint64 `json:"file_first_bytes"`
	FileLastBytes   uint64 `json:"file_last_bytes"`
	ShmemFirstBytes uint64 `json:"shmem_first_bytes"`
	ShmemLastBytes  uint64 `json:"shmem_last_bytes"`
	// ThreadsFirst and ThreadsMax are its thread count at the first
	// sample and the most seen in any (/proc/PID/status Threads), 0 in
	// recordings made before threads were recorded each sample.
	ThreadsFirst int `json:"threads_first,omitempty"`
	ThreadsMax   int `json:"threads_max,omitempty"`

	Growing bool `json:"growing"`
	// Note and Evidence are the words on a growing process, empty as
	// memstate returns it: the report layer fills them for output
	// (report/mem.DescribeGrowth): what was observed, and the plain
	// reading of the RSS split and the allocator evidence, one line each.
	// Retention is the allocator evidence `watch` read when the process
	// started growing (nil when none was recorded; see
	// [ProcGrowth.AttachRetention]), ThreadsAtGrowth the thread count it
	// was read with. (The fields keep the order of the JSON output.)
	Note            string     `json:"note,omitempty"`
	Retention       *Retention `json:"retention,omitempty"`
	Evidence        []string   `json:"evidence,omitempty"`
	ThreadsAtGrowth int        `json:"-"`
}

// GrowthSeries fits a straight line to each process's anon memory and
// RSS over the samples and flags steady anon growth (see GrowthOptions).
// Processes are told apart by PID and start time. It gathers one sample
// at a time, for a recording read as a stream (`memdiag analyze` of a
// day): three numbers per process and sample (time, anon and RSS bytes),
// not the samples, packed as varint deltas (~10 bytes a point instead of
// 24: a day of 10 processes is ~9 MB, issue 32). The zero value is ready to use. It is pure: analyze
// can re-derive it from a recording.
type GrowthSeries struct {
	procs map[growthKey]*growthProc
}

type growthKey struct {
	pid   int
	start uint64
}

type growthPoint struct {
	t         int64 // Unix ns
	anon, rss uint64
	// RssFile and RssShmem, bytes: the first and last of them are what
	// Fit reports, and Trim needs them at any point.
	file, shmem uint64
}

type growthProc struct {
	comm        string // the latest seen
	first, last time.Time
	// pts holds n points, each the zigzag varint deltas of t, anon, rss,
	// file and shmem from the point before (from zero for the first); last is the
	// last point, the base of the next delta.
	pts  []byte
	n    int
	prev growthPoint
	// RssFile and RssShmem at the first and last times.
	fileFirst, fileLast, shmemFirst, shmemLast uint64
	// Threads at the first time and the most in any sample.
	threadsFirst, threadsMax int
}

// Add adds the processes' RSS at time t.
func (gs *GrowthSeries) Add(t time.Time, procs []ProcRSS) {
	if gs.procs == nil {
		gs.procs = map[growthKey]*growthProc{}
	}
	for i := range procs {
		p := &procs[i]
		k := growthKey{p.PID, p.StartTicks}
		gp := gs.procs[k]
		if gp == nil {
			gp = &growthProc{first: t, last: t, fileFirst: p.FileBytes, shmemFirst: p.ShmemBytes, threadsFirst: p.Threads}
			gs.procs[k] = gp
		}
		if t.Before(gp.first) {
			gp.first, gp.fileFirst, gp.shmemFirst, gp.threadsFirst = t, p.FileBytes, p.ShmemBytes, p.Threads
		}
		gp.threadsMax = max(gp.threadsMax, p.Threads)
		if !t.Before(gp.last) {
			gp.last, gp.fileLast, gp.shmemLast = t, p.FileBytes, p.ShmemBytes
		}
		gp.add(growthPoint{t.UnixNano(), p.AnonBytes, p.AnonBytes + p.FileBytes + p.ShmemBytes, p.FileBytes, p.ShmemBytes})
		gp.comm = p.Comm
	}
}

// add appends pt to gp's packed points.
func (gp *growthProc) add(pt growthPoint) {
	gp.pts = binary.AppendVarint(gp.pts, pt.t-gp.prev.t)
	gp.pts = binary.AppendVarint(gp.pts, int64(pt.anon-gp.prev.anon))
	gp.pts = binary.AppendVarint(gp.pts, int64(pt.rss-gp.prev.rss))
	gp.pts = binary.AppendVarint(gp.pts, int64(pt.file-gp.prev.file))
	gp.pts = binary.AppendVarint(gp.pts, int64(pt.shmem-gp.prev.shmem))
	gp.prev = pt
	gp.n++
}

// points appends gp's points, in the order added, to buf.
func (gp *growthProc) points(buf []growthPoint) []growthPoint {
	var p growthPoint
	b := gp.pts
	for range gp.n {
		var d [5]int64
		for i := range d {
			v, k := binary.Varint(b)
			d[i], b = v, b[k:]
		}
		p = growthPoint{p.t + d[0], p.anon + uint64(d[1]), p.rss + uint64(d[2]), p.file + uint64(d[3]), p.shmem + uint64(d[4])}
		buf = append(buf, p)
	}
	return buf
}

// Trim drops the points taken before from, and the processes left with
// none, as if they had never been added: a sliding window
// (correlate.Series.Trim). Each process's points are unpacked and packed
// again, so call it in chunks, not at every Add.
func (gs *GrowthSeries) Trim(from time.Time) {
	cut := from.UnixNano()
	var buf []growthPoint
	for k, gp := range gs.procs {
		if !gp.first.Before(from) {
			continue
		}
		if gp.last.Before(from) {
			delete(gs.procs, k)
			continue
		}
		pts := gp.points(buf[:0])
		buf = pts
		gp.pts, gp.n, gp.prev = nil, 0, growthPoint{}
		gp.first = time.Time{}
		for _, p := range pts {
			if p.t < cut {
				continue
			}
			if gp.n == 0 || p.t < gp.first.UnixNano() {
				// In last's location, as the times added were.
				gp.first, gp.fileFirst, gp.shmemFirst = time.Unix(0, p.t).In(gp.last.Location()), p.file, p.shmem
			}
			gp.add(p)
		}
		if gp.n == 0 {
			delete(gs.procs, k)
		}
	}
}

// Fit fits each process seen in at least two samples. The result lists
// them growing ones first, fastest first.
func (gs *GrowthSeries) Fit(o GrowthOptions) []ProcGrowth {
	var out []ProcGrowth
	var buf []growthPoint
	for k, gp := range gs.procs {
		if gp.n < 2 {
			continue
		}
		pts := gp.points(buf[:0])
		buf = pts
		sort.Slice(pts, func(i, j int) bool { return pts[i].t < pts[j].t })
		// Kept in the order sorted, as the points were sorted in place
		// before they were packed: a later Fit starts from the same order.
		gp.pts, gp.n, gp.prev = gp.pts[:0], 0, growthPoint{}
		for _, p := range pts {
			gp.add(p)
		}
		g := ProcGrowth{
			PID: k.pid, StartTicks: k.start, Comm: gp.comm,
			First: gp.first, Last: gp.last, Points: len(pts),
			AnonFirstBytes: pts[0].anon, AnonLastBytes: pts[len(pts)-1].anon,
			FileFirstBytes: gp.fileFirst, FileLastBytes: gp.fileLast,
			ShmemFirstBytes: gp.shmemFirst, ShmemLastBytes: gp.shmemLast,
			ThreadsFirst: gp.threadsFirst, ThreadsMax: gp.threadsMax,
		}
		g.Observed = g.Last.Sub(g.First)
		xs := make([]float64, len(pts))
		anon := make([]float64, len(pts))
		rss := make([]float64, len(pts))
		for i, p := range pts {
			xs[i] = time.Duration(p.t - pts[0].t).Hours()
			anon[i] = float64(p.anon) / (1 << 20)
			rss[i] = float64(p.rss) / (1 << 20)
		}
		g.AnonSlope, g.AnonR2 = fit(xs, anon)
		g.RSSSlope, g.RSSR2 = fit(xs, rss)
		g.Growing = g.Observed >= o.MinObserved && g.Points >= o.MinPoints && g.AnonR2 >= o.MinR2 &&
			g.AnonSlope >= o.MinSlope && g.AnonLastBytes >= g.AnonFirstBytes+o.MinIncrease
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Growing != b.Growing {
			return a.Growing
		}
		if a.AnonSlope != b.AnonSlope {
			return a.AnonSlope > b.AnonSlope
		}
		if a.PID != b.PID {
			return a.PID < b.PID
		}
		return a.StartTicks < b.StartTicks
	})
	return out
}

// fit returns the least-squares slope of ys over xs and the coefficient
// of determination R² (0 when ys is constant or xs has no spread).
func fit(xs, ys []float64) (slope, r2 float64) {
	n := float64(len(xs))
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx, my = mx/n, my/n
	var sxx, sxy, syy float64
	for i := range xs {
		dx, dy := xs[i]-mx, ys[i]-my
		sxx += dx * dx
		sxy += dx * dy
		syy += dy * dy
	}
	if sxx == 0 {
		return 0, 0
	}
	slope = sxy / sxx
	if syy == 0 {
		return slope, 0
	}
	r2 = sxy * sxy / (sxx * syy)
	return slope, math.Min(r2, 1)
}
