package signal

import (
	"fmt"
	"math"
	"time"

	"github.com/memdiag/memdiag/lru"
	"github.com/memdiag/memdiag/psi"
)

// PSI that contradicts itself. The kernel's avg10/avg60 are exponentially
// weighted averages of the same stall time that total counts
// (kernel/sched/psi.c update_averages, every 2 s): given total's rise S
// over a span of dt and the average at its start, the average at its end
// is bounded, whatever happened inside the span:
//
//	at most  a·e^(−dt/τ) + 1 − e^(−S/τ)            (all the stall at the end)
//	at least a·e^(−dt/τ) + e^(−(dt−S)/τ) − e^(−dt/τ) (all of it at the start)
//
// and since boot (or the group's creation) at most 1 − e^(−total/τ).
// A memory stall comes from reclaim, refaults, swap-in or major faults
// (and compaction), each of which moves a /proc/vmstat counter: a high
// stall over a span in which none of them moved at all is also a
// contradiction. Kernels have had PSI accounting bugs (leaked task
// counts: "ghost" pressure that never ends), so the tools that read PSI
// check it: [PSICheck].

// PSISuspectKind names a contradiction.
type PSISuspectKind string

// Contradictions.
const (
	// PSIAveragesVsTotal: an average outside what total's rise allows.
	PSIAveragesVsTotal PSISuspectKind = "averages_vs_total"
	// PSIStallWithoutActivity: memory stall with no reclaim, refault,
	// swap or major-fault counter moving.
	PSIStallWithoutActivity PSISuspectKind = "stall_without_activity"
)

// PSISuspect is one contradiction found in a scope's PSI. Percentages are
// of wall time, 0–100.
type PSISuspect struct {
	Kind     PSISuspectKind `json:"kind"`
	Resource string         `json:"resource"`      // "memory", "io", "cpu"
	Line     string         `json:"line"`          // "some" or "full"
	From     time.Time      `json:"from,omitzero"` // the span checked (the worst one, PSIAveragesVsTotal)
	To       time.Time      `json:"to"`

	// PSIAveragesVsTotal: the average (10 or 60 s) the kernel reported at
	// To, the bound total's rise over From..To allowed (a most when
	// Reported is above it, a least when below), and that rise as a share
	// of the span. SinceBoot: the bound is from total since boot (From
	// is zero). Contradicted of Checked spans did not fit.
	Avg         int     `json:"avg,omitempty"`
	Reported    float64 `json:"reported_pct,omitempty"`
	Bound       float64 `json:"bound_pct,omitempty"`
	TotalShare  float64 `json:"total_share_pct"`
	SinceBoot   bool    `json:"since_boot,omitempty"`
	Checked     int     `json:"checked,omitempty"`
	Contradicts int     `json:"contradicted,omitempty"`
	// Also names the resource's other lines and averages that
	// contradicted total too ("full avg10").
	Also []string `json:"also,omitempty"`

	// PSIStallWithoutActivity: the counters that did not move over
	// From..To (TotalShare is the stall).
	Counters []string `json:"counters,omitempty"`
}

// PSICheckOptions tune [PSICheck]; zero values take the defaults.
type PSICheckOptions struct {
	// Span is the shortest span an average is checked over (20 s): the
	// kernel updates them every 2 s, so shorter spans prove nothing.
	Span time.Duration
	// MinStall is how long a stall without activity must last (10 s);
	// `mem` sets its interval.
	MinStall time.Duration
	// StallShare is the stall (0–1) that needs activity (0.5).
	StallShare float64
	// Margin is how far (percentage points) beyond its bound an average
	// must be to contradict it (10).
	Margin float64
}

func (o PSICheckOptions) withDefaults() PSICheckOptions {
	if o.Span <= 0 {
		o.Span = 20 * time.Second
	}
	if o.MinStall <= 0 {
		o.MinStall = 10 * time.Second
	}
	if o.StallShare <= 0 {
		o.StallShare = 0.5
	}
	if o.Margin <= 0 {
		o.Margin = 10
	}
	return o
}

// psiLag is how far the averages can lag total: the kernel folds stall
// into them every 2 s (psi_period), plus half a second of skew between
// a sample's time and its read.
const psiLag = 2500 * time.Millisecond

// activityList lists the counters a memory stall moves.
var activityList = []struct {
	name string
	get  func(*lru.VMStat) *uint64
}{
	{"pgscan_kswapd", func(v *lru.VMStat) *uint64 { return v.PgscanKswapd }},
	{"pgscan_direct", func(v *lru.VMStat) *uint64 { return v.PgscanDirect }},
	{"pgscan_anon", func(v *lru.VMStat) *uint64 { return v.PgscanAnon }},
	{"pgscan_file", func(v *lru.VMStat) *uint64 { return v.PgscanFile }},
	{"pgsteal_kswapd", func(v *lru.VMStat) *uint64 { return v.PgstealKswapd }},
	{"pgsteal_direct", func(v *lru.VMStat) *uint64 { return v.PgstealDirect }},
	{"pgsteal_anon", func(v *lru.VMStat) *uint64 { return v.PgstealAnon }},
	{"pgsteal_file", func(v *lru.VMStat) *uint64 { return v.PgstealFile }},
	{"workingset_refault_file", func(v *lru.VMStat) *uint64 { return v.WorkingsetRefaultFile }},
	{"workingset_refault_anon", func(v *lru.VMStat) *uint64 { return v.WorkingsetRefaultAnon }},
	{"workingset_activate", func(v *lru.VMStat) *uint64 { return v.WorkingsetActivate }},
	{"workingset_restore", func(v *lru.VMStat) *uint64 { return v.WorkingsetRestore }},
	{"pswpin", func(v *lru.VMStat) *uint64 { return v.Pswpin }},
	{"pswpout", func(v *lru.VMStat) *uint64 { return v.Pswpout }},
	{"pgmajfault", func(v *lru.VMStat) *uint64 { return v.Pgmajfault }},
	{"allocstall", func(v *lru.VMStat) *uint64 { return v.Allocstall }},
}

// maxActivity is how many VMStats (host, group) Add keeps counters of.
const maxActivity = 2

type psiLineVal struct {
	ok bool
	l  psi.Line
}

type psiPoint struct {
	t     time.Time
	lines [3][2]psiLineVal // Resources × some, full
	ctr   [maxActivity][16]struct {
		ok bool
		v  uint64
	}
}

type avgKey struct {
	res, line, avg int
}

// PSICheck looks for PSI that contradicts itself over a run of readings
// of one scope (host or cgroup): Add each reading in time order, then
// Findings. It is pure: the same readings give the same findings.
type PSICheck struct {
	o PSICheckOptions
	// hist is the recent points, hist[0] the oldest kept: a window at
	// the end of buf, moved to its start when it reaches buf's end, so
	// that Add appends without reallocating once buf holds twice the
	// window (a point is ~800 bytes; a day at 1 s is 86,400 of them).
	hist, buf []psiPoint
	avg       map[avgKey]*PSISuspect
	// the current run of stall without activity, and the longest one
	run, best *PSISuspect
	runStall  time.Duration
	runWall   time.Duration
}

// NewPSICheck returns an empty check.
func NewPSICheck(o PSICheckOptions) *PSICheck {
	return &PSICheck{o: o.withDefaults(), avg: map[avgKey]*PSISuspect{}}
}

// expNegligible: for x at least this, e^−x is under half an ulp of 1
// (2^−54), so 1−e^−x is exactly 1 in float64.
const expNegligible = 38

var avgTaus = [...]struct {
	avg int
	tau float64
}{{10, 10}, {60, 60}}

// Add takes the scope's next reading at t: p its PSI, activity the
// counters a memory stall moves (the host's /proc/vmstat and, for a
// cgroup, its own; nil ones are skipped, at most two are kept).
func (c *PSICheck) Add(t time.Time, p *psi.Snapshot, activity ...*lru.VMStat) {
	r := NewPSIReading(t, p, activity...)
	c.AddReading(&r)
}

// PSIReading is one reading as Add takes it (~800 bytes, no pointer but
// the time's location), for a caller that keeps the readings to check a
// sliding window again (correlate.Series.Trim): a new PSICheck fed the
// window's readings finds what one fed only those would.
type PSIReading struct{ pt psiPoint }

// NewPSIReading is the reading Add(t, p, activity...) takes.
func NewPSIReading(t time.Time, p *psi.Snapshot, activity ...*lru.VMStat) PSIReading {
	var pt psiPoint
	pt.t = t
	for i, name := range psi.Resources {
		r := p.Get(name)
		if r == nil {
			continue
		}
		pt.lines[i][0] = psiLineVal{true, r.Some}
		if r.Full != nil {
			pt.lines[i][1] = psiLineVal{true, *r.Full}
		}
	}
	for k, v := range activity {
		if k >= maxActivity || v == nil {
			continue
		}
		for j, a := range activityList {
			if x := a.get(v); x != nil {
				pt.ctr[k][j].ok, pt.ctr[k][j].v = true, *x
			}
		}
	}
	return PSIReading{pt}
}

// Time is the reading's time.
func (r *PSIReading) Time() time.Time { return r.pt.t }

// AddReading takes the scope's next reading, as Add.
func (c *PSICheck) AddReading(r *PSIReading) {
	pt := r.pt
	c.checkBoot(&pt)
	if n := len(c.hist); n > 0 {
		prev := &c.hist[n-1]
		if pt.t.Sub(prev.t) <= 0 {
			return // out of order or a repeat: nothing to compare
		}
		c.checkStall(prev, &pt)
		// The anchor: the latest point at least Span before t.
		a := -1
		for i := n - 1; i >= 0; i-- {
			if pt.t.Sub(c.hist[i].t) >= c.o.Span {
				a = i
				break
			}
		}
		if a >= 0 {
			c.checkAverages(&c.hist[a], &pt)
			c.hist = c.hist[a:]
		}
	}
	c.push(&pt)
}

// push appends pt to hist, in buf.
func (c *PSICheck) push(pt *psiPoint) {
	if len(c.hist) == cap(c.hist) && 2*len(c.hist) <= cap(c.buf) {
		c.hist = c.buf[:copy(c.buf[:len(c.hist)], c.hist)]
	}
	grow := len(c.hist) == cap(c.hist)
	c.hist = append(c.hist, *pt)
	if grow {
		c.buf = c.hist
	}
}

var lineNames = [2]string{"some", "full"}

// checkBoot bounds each average by total since boot.
func (c *PSICheck) checkBoot(pt *psiPoint) {
	for r := range pt.lines {
		for l, lv := range pt.lines[r] {
			if !lv.ok {
				continue
			}
			for _, at := range avgTaus {
				s := (lv.l.Total + psiLag).Seconds()
				hi := 100.0 // 1−e^−x is 1 in float64 beyond expNegligible
				if x := s / at.tau; x < expNegligible {
					hi = 100 * (1 - math.Exp(-x))
				}
				rep := avgOf(lv.l, at.avg)
				c.note(avgKey{r, l, at.avg}, rep > hi+c.o.Margin, func(x *PSISuspect) {
					x.From, x.To, x.Reported, x.Bound, x.SinceBoot = time.Time{}, pt.t, rep, hi, true
					x.TotalShare = 0
				}, rep-hi)
			}
		}
	}
}

// checkAverages bounds each average at b by its value at a and total's
// rise between them, allowing the kernel's lag at both ends.
func (c *PSICheck) checkAverages(a, b *psiPoint) {
	dt := b.t.Sub(a.t)
	dtMin, dtMax := max(0, (dt-psiLag).Seconds()), (dt + psiLag).Seconds()
	// The decays over dt are the same for every line: once a reading,
	// not once a line (two of the five exponentials below; a day's
	// analyze computes them 86,400 times per scope).
	var decayMin, decayMax [len(avgTaus)]float64
	for i, at := range avgTaus {
		decayMin[i], decayMax[i] = math.Exp(-dtMin/at.tau), math.Exp(-dtMax/at.tau)
	}
	for r := range b.lines {
		for l := range b.lines[r] {
			la, lb := a.lines[r][l], b.lines[r][l]
			if !la.ok || !lb.ok || lb.l.Total < la.l.Total {
				continue // missing, or total went backwards (another group, a reset)
			}
			s := lb.l.Total - la.l.Total
			share := 100 * min(1, s.Seconds()/dt.Seconds())
			for i, at := range avgTaus {
				tau := at.tau
				av := avgOf(la.l, at.avg) / 100
				rep := avgOf(lb.l, at.avg)
				sMax := min(s+psiLag, dt+psiLag).Seconds()
				sMin := max(0, (s - psiLag).Seconds())
				hi := 100 * (av*decayMin[i] + 1 - math.Exp(-sMax/tau))
				lo := 100 * (av*decayMax[i] + math.Exp(-(dtMax-sMin)/tau) - decayMax[i])
				excess, bound := 0.0, hi
				switch {
				case rep > hi:
					excess = rep - hi
				case rep < lo:
					excess, bound = lo-rep, lo
				}
				c.note(avgKey{r, l, at.avg}, excess > c.o.Margin, func(x *PSISuspect) {
					x.From, x.To, x.Reported, x.Bound, x.TotalShare, x.SinceBoot = a.t, b.t, rep, bound, share, false
				}, excess)
			}
		}
	}
}

// note counts one check of key k; a contradiction by excess points is
// kept when it is the worst so far.
func (c *PSICheck) note(k avgKey, contradicts bool, set func(*PSISuspect), excess float64) {
	x := c.avg[k]
	if x == nil {
		x = &PSISuspect{Kind: PSIAveragesVsTotal, Resource: psi.Resources[k.res], Line: lineNames[k.line], Avg: k.avg}
		c.avg[k] = x
	}
	x.Checked++
	if !contradicts {
		return
	}
	x.Contradicts++
	if x.Contradicts == 1 || excess > worstExcess(x) {
		set(x)
	}
}

func worstExcess(x *PSISuspect) float64 { return math.Abs(x.Reported - x.Bound) }

// checkStall extends or ends the run of memory stall without activity.
func (c *PSICheck) checkStall(a, b *psiPoint) {
	la, lb := a.lines[0][0], b.lines[0][0] // memory some
	dt := b.t.Sub(a.t)
	known, moved := false, false
	for k := range maxActivity {
		for j := range activityList {
			x, y := a.ctr[k][j], b.ctr[k][j]
			if x.ok && y.ok {
				known = true
				moved = moved || y.v != x.v
			}
		}
	}
	stalled := la.ok && lb.ok && lb.l.Total >= la.l.Total &&
		(lb.l.Total-la.l.Total).Seconds() >= c.o.StallShare*dt.Seconds()
	if !stalled || !known || moved {
		c.endRun()
		return
	}
	// The counters read at both ends, named only for a stall without
	// activity (most intervals have none: no list to build).
	var counters []string
	for k := range maxActivity {
		for j, ac := range activityList {
			if a.ctr[k][j].ok && b.ctr[k][j].ok && (k == 0 || !contains(counters, ac.name)) {
				counters = append(counters, ac.name)
			}
		}
	}
	if c.run == nil {
		c.run = &PSISuspect{Kind: PSIStallWithoutActivity, Resource: "memory", Line: "some", From: a.t}
		c.runStall, c.runWall = 0, 0
	}
	c.run.To, c.run.Counters = b.t, counters
	c.runStall += lb.l.Total - la.l.Total
	c.runWall += dt
	c.run.TotalShare = 100 * min(1, c.runStall.Seconds()/c.runWall.Seconds())
}

func (c *PSICheck) endRun() {
	if c.run == nil {
		return
	}
	if c.runWall >= c.o.MinStall && (c.best == nil || c.run.To.Sub(c.run.From) > c.best.To.Sub(c.best.From)) {
		c.best = c.run
	}
	c.run = nil
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func avgOf(l psi.Line, avg int) float64 {
	if avg == 60 {
		return l.Avg60
	}
	return l.Avg10
}

// Findings are the contradictions found so far: for each resource, the
// first of its lines and averages (some before full, avg10 before avg60)
// of which at least three checks (or every check, when fewer) did not
// fit total, with the others that did not named in Also; then the
// longest stall without activity. Resources in the order of
// psi.Resources.
func (c *PSICheck) Findings() []PSISuspect {
	var out []PSISuspect
	for r := range psi.Resources {
		var first *PSISuspect
		for l := range 2 {
			for _, at := range avgTaus {
				x := c.avg[avgKey{r, l, at.avg}]
				if x == nil || x.Contradicts == 0 || x.Contradicts < min(3, x.Checked) {
					continue
				}
				if first == nil {
					f := *x
					first = &f
					continue
				}
				first.Also = append(first.Also, fmt.Sprintf("%s avg%d", x.Line, x.Avg))
			}
		}
		if first != nil {
			out = append(out, *first)
		}
	}
	run, best := c.run, c.best
	c.endRun()
	if c.best != nil {
		out = append(out, *c.best)
	}
	c.run, c.best = run, best
	return out
}
