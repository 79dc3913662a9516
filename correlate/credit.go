package correlate

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/timers"
)

// The culprit model's constants (docs/analyze.md explains each).
const (
	// CreditFloor is the I/O (read+write) a culprit's processes must do
	// in an episode to be credited with it.
	CreditFloor = 4 << 20
	// MinShare is the share of every recorded process's I/O in the
	// episode a culprit's processes must do, alone or together with jobs
	// that started with it in one wake-up.
	MinShare = 0.25
	// SoloShare: a culprit credited with one episode only needs this
	// share and a start no later than one interval after the stall began.
	SoloShare = 0.5
	// MaxChance: a culprit credited with two or more episodes needs a
	// chance probability (null model or firings) below this.
	MaxChance = 0.01
	// SoloCap caps the confidence of a culprit credited with one episode.
	SoloCap = 0.6
	// BlindCap caps the confidence of a job named from its firings alone,
	// when the recording has no per-process data.
	BlindCap = 0.45
	// unknownMinHits is how many episodes on its schedule a recurrence
	// that no job or process explains needs to be reported (kind unknown).
	unknownMinHits = 5
	// RideAlongCap caps the confidence of a job credited only together
	// with the jobs of its wake-up: its own median share is below
	// MinShare, so it is never more than low.
	RideAlongCap = 0.49
	// LateFactor scales the confidence when its processes started after
	// the stall had begun in every credited episode.
	LateFactor = 0.8
)

// EpisodeCredit is a culprit's part in one episode it is credited with.
type EpisodeCredit struct {
	Episode  int       `json:"episode"`
	Start    time.Time `json:"start"`
	Bytes    uint64    `json:"bytes"`     // its processes' I/O in the episode
	AllBytes uint64    `json:"all_bytes"` // every recorded process's I/O in the episode
	Share    float64   `json:"share"`     // Bytes / AllBytes
	// MemBytes is its processes' RSS growth in the episode, MemAll that
	// of every recorded RSS holder that grew (Sample.RSS's largest), and
	// MemShare their ratio: the memory it took.
	MemBytes uint64  `json:"mem_bytes"`
	MemAll   uint64  `json:"mem_all_bytes"`
	MemShare float64 `json:"mem_share"`
	// GroupShare is the share of the jobs that started with it in one
	// wake-up (FiresWith), itself included; 0 when alone.
	GroupShare float64 `json:"group_share,omitempty"`
	// LeadS is how many seconds before the stall onset (the recorded
	// onset, else the episode's start) its first process started;
	// negative: after. Nil when its processes were already running.
	LeadS *float64 `json:"lead_s,omitempty"`
}

// Proof is a culprit's structured evidence: what its confidence is
// computed from ([Proof.Confidence]), so a skeptic can recompute it.
type Proof struct {
	// ProcessesRecorded: the recording has per-process I/O or process
	// events. Ran: a process of the culprit was recorded.
	ProcessesRecorded bool `json:"processes_recorded"`
	Ran               bool `json:"ran"`
	// Ties say how each of its recorded processes belongs to it.
	Ties []Tie `json:"ties"`
	// Credits are the episodes it is credited with.
	Credits []EpisodeCredit `json:"credits"`
	// FiringsUsed: its projected firings were weighed; FiringsUnused
	// says why not otherwise (report writes it as firings_note). FiringsMatched and FiringsMissed are the planned
	// times of its firings within the recording followed, or not, by an
	// episode it is credited with (by any episode without per-process
	// data). PFiring is the chance of as many matches with episodes at
	// random times (1 when not used).
	FiringsUsed    bool        `json:"firings_used"`
	FiringsUnused  Unused      `json:"firings_unused,omitempty"`
	FiringsMatched []time.Time `json:"firings_matched"`
	FiringsMissed  []time.Time `json:"firings_missed"`
	PFiring        float64     `json:"p_firing"`
	// Null model: Presence is the share of the intervals outside episodes
	// in which its processes did I/O, (a+1)/(m+2); EpisodeIntervals the
	// mean episode length plus one (the interval before it); EpisodeChance
	// = 1 − (1 − Presence)^EpisodeIntervals, the chance that a random
	// episode meets its activity; PNull = P(Binomial(episodes,
	// EpisodeChance) ≥ credited episodes). A process alive everywhere has
	// PNull 1: it explains nothing.
	Presence         float64 `json:"presence"`
	PresentIntervals int     `json:"present_intervals"` // a
	OutsideIntervals int     `json:"outside_intervals"` // m
	EpisodeIntervals float64 `json:"episode_intervals"`
	EpisodeChance    float64 `json:"episode_chance"`
	PNull            float64 `json:"p_null"`
	// The confidence's terms: P = min(PNull, PFiring); Strength =
	// min(1, −log10(P)/4);
	// Share = the median over its credits of its own share of the I/O
	// or of the memory taken, the larger (not its wake-up group's); Repeat = its matched firings / firings (FiringsUsed) or credited
	// episodes / its runs (episodes with its I/O plus runs outside them);
	// Late: it started after the stall in every credited episode with a
	// known start; Cap: SoloCap, BlindCap, RideAlongCap or 1.
	Runs     int     `json:"runs"`
	P        float64 `json:"p"`
	Strength float64 `json:"strength"`
	Share    float64 `json:"share"`
	Repeat   float64 `json:"repeat"`
	Late     bool    `json:"late"`
	Cap      float64 `json:"cap"`
	// FiresWith are the jobs that started in the same wake-up in its
	// credited episodes (coalesced timers).
	FiresWith []string `json:"fires_with,omitempty"`
	// Unpredictable: RandomizedDelaySec= is at least half its period, so
	// its firing times say nothing; matched by process evidence only.
	Unpredictable bool `json:"unpredictable,omitempty"`
	// Starts (kind process) are the recorded starts (exec events) of its
	// runs — a run is its oldest process started for the episode, such
	// as the script that runs dd and cat — and StartsPeriod their own
	// period (EstimatePeriod, nil when they show none). A period from
	// exact exec times stands where episodes merge or are missed.
	Starts       []time.Time `json:"starts,omitempty"`
	StartsPeriod *StartsFit  `json:"starts_period,omitempty"`
}

// StartsFit is the period of a process culprit's recorded starts
// (Proof.StartsPeriod): EstimatePeriod of Proof.Starts.
type StartsFit struct {
	Period   time.Duration `json:"-"`
	PeriodS  float64       `json:"period_s"`
	JitterS  float64       `json:"jitter_s"`
	Matched  int           `json:"matched"`  // starts on the schedule
	Expected int           `json:"expected"` // schedule points within the recording
	Score    float64       `json:"score"`
}

// Confidence is min(Cap, Strength × (0.5 + 0.5 × Share) × Repeat ×
// (LateFactor if Late)), rounded to 0.01.
func (p *Proof) Confidence() float64 {
	c := p.Strength * (0.5 + 0.5*p.Share) * p.Repeat
	if p.Late {
		c *= LateFactor
	}
	c = math.Min(c, p.Cap)
	return math.Round(c*100) / 100
}

func strength(p float64) float64 {
	return math.Min(1, -math.Log10(math.Max(p, 1e-12))/4)
}

// NotRun is a job whose firings would have matched episodes, but which
// the recording shows did not run: FiringsNear of its firings fell near
// episodes and no process of it was recorded, or (FiringsNear 0) its
// firings were not weighed, for FiringsUnused. report writes the reason.
type NotRun struct {
	Name          string
	Job           *timers.Job
	FiringsNear   int
	FiringsUnused Unused
}

// modelCtx is what every job's evaluation shares.
type modelCtx struct {
	res      *Result
	sr       *Series
	o        Options
	pt       *procTable
	recorded bool
	inEp     []bool  // per interval: inside an episode
	epLen    float64 // mean episode intervals + 1
	wake     time.Duration
	jobUnits map[string]string // every job's unit → the job's name
}

// jobRun is one job's activity per episode.
type jobRun struct {
	job    *timers.Job
	own    *owner
	procs  []*proc
	bytes  []uint64    // per episode
	mem    []uint64    // per episode: RSS growth of its processes
	first  []time.Time // per episode: its first exec in or just before it, zero if none
	procIn [][]ProcActivity
}

// rankCulprits fills res.Culprits and Episode.Culprit.
func rankCulprits(res *Result, sr *Series, o Options) {
	h := &sr.Header
	n := len(res.Episodes)
	res.ProcessesRecorded = sr.sawProc || collectorOn(h, "procs") || collectorOn(h, "events")
	if n == 0 {
		return
	}
	mc := &modelCtx{res: res, sr: sr, o: o, recorded: res.ProcessesRecorded, wake: max(2*res.Interval, 5*time.Second)}
	mc.pt = buildProcTable(sr)
	mc.inEp = make([]bool, len(sr.ivs))
	total := 0
	for i := range res.Episodes {
		total += res.Episodes[i].Intervals
	}
	mc.epLen = float64(total)/float64(n) + 1
	// Episodes are in time order and do not overlap: one sweep.
	ep := 0
	for k, iv := range sr.ivs {
		for ep < n && res.Episodes[ep].End.Before(iv.End) {
			ep++
		}
		mc.inEp[k] = ep < n && !iv.Start.Before(res.Episodes[ep].Start) && !iv.End.After(res.Episodes[ep].End)
	}

	firings := map[string][]timers.Firing{}
	projected := false
	if len(h.Jobs) > 0 {
		if o.Project == nil {
			res.Warnings = append(res.Warnings, "job schedules were not projected over the recording; jobs are matched only through their processes")
		} else {
			projected = true
			for _, f := range o.Project(h.Jobs, res.Start.Add(-o.LagTolerance), res.End, res.Location) {
				firings[f.Job] = append(firings[f.Job], f)
			}
		}
	}
	// A process in a job's own unit is that job's: another job running
	// the same program does not claim it (two timers of one tool).
	mc.jobUnits = map[string]string{}
	for j := range h.Jobs {
		for _, u := range JobUnits(&h.Jobs[j]) {
			mc.jobUnits[u] = h.Jobs[j].Name
		}
	}
	runs := make([]*jobRun, len(h.Jobs))
	for j := range h.Jobs {
		runs[j] = mc.jobActivity(&h.Jobs[j])
	}
	// Only firings that can happen contest an episode.
	var usable []timers.Job
	for j := range h.Jobs {
		if ok, _ := firingsUsable(&h.Jobs[j], projected, firings[h.Jobs[j].Name]); ok {
			usable = append(usable, h.Jobs[j])
		}
	}
	closest := closestFirings(res, usable, firings, o)
	var cs []Culprit
	for j := range h.Jobs {
		if c := mc.evalJob(runs[j], runs, firings[h.Jobs[j].Name], closest, projected); c != nil {
			cs = append(cs, *c)
		}
	}
	if c := mc.recurringUnexplained(cs); c != nil {
		cs = append(cs, *c)
	}
	slices.SortStableFunc(cs, func(a, b Culprit) int {
		// An unknown cause names nothing: it comes after every culprit
		// that names a job or a process.
		if ua, ub := a.Kind == KindUnknown, b.Kind == KindUnknown; ua != ub {
			if ua {
				return 1
			}
			return -1
		}
		if c := cmp.Compare(b.EpisodesExplained, a.EpisodesExplained); c != 0 {
			return c
		}
		// Co-firing jobs explain the same episodes: the one doing more
		// I/O did more of the harm.
		if c := cmp.Compare(b.BytesPerEpisode, a.BytesPerEpisode); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Confidence, a.Confidence); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	for i := range cs {
		cs[i].Rank = i + 1
		for _, e := range cs[i].Episodes {
			if res.Episodes[e].Culprit == "" {
				res.Episodes[e].Culprit = cs[i].Name
			}
		}
	}
	res.Culprits = cs
}

// collectorOn reports whether the header lists collector name as
// available.
func collectorOn(h *record.Header, name string) bool {
	for _, c := range h.Collectors {
		if c.Name == name && c.Available {
			return true
		}
	}
	return false
}

// jobActivity finds the job's processes and what they did per episode.
func (mc *modelCtx) jobActivity(j *timers.Job) *jobRun {
	r := &jobRun{job: j, own: newOwner(j, mc.pt)}
	r.own.jobUnits = mc.jobUnits
	for _, p := range mc.pt.all {
		if r.own.tie(p) != nil {
			r.procs = append(r.procs, p)
		}
	}
	n := len(mc.res.Episodes)
	r.bytes, r.mem, r.first, r.procIn = make([]uint64, n), make([]uint64, n), make([]time.Time, n), make([][]ProcActivity, n)
	for i := range mc.res.Episodes {
		e := &mc.res.Episodes[i]
		for _, pa := range mc.sr.parts[e.Start] {
			p := mc.pt.lookup(pa.PID, pa.start, e.End)
			if p == nil || r.own.tie(p) == nil {
				continue
			}
			r.bytes[i] += pa.Bytes()
			r.mem[i] += pa.memGrowth
			if pa.Comm == "" {
				continue // seen only among the RSS holders
			}
			if !pa.execAt.IsZero() && (r.first[i].IsZero() || pa.execAt.Before(r.first[i])) {
				r.first[i] = pa.execAt
			}
			if t := r.own.tie(p); t != nil {
				pa.StartedBy = t.StartedBy
			}
			r.procIn[i] = append(r.procIn[i], pa.ProcActivity)
		}
	}
	return r
}

// Unused says why a culprit's firings were not weighed (Proof.FiringsUnused).
type Unused string

// Why firings were not weighed.
const (
	// UnusedNotProjected: its schedule was not projected over the recording.
	UnusedNotProjected Unused = "not_projected"
	// UnusedIdleNow: the recording says it could not fire then
	// (timers.Job.IdleNow; LiveNote says why).
	UnusedIdleNow Unused = "idle_now"
	// UnusedUnpredictable: RandomizedDelaySec= is at least half its period.
	UnusedUnpredictable Unused = "unpredictable"
	// UnusedNoneInRecording: no firing fell within the recording.
	UnusedNoneInRecording Unused = "none_in_recording"
	// UnusedNoJob: a process no timer or cron job runs.
	UnusedNoJob Unused = "no_job"
)

// firingsUsable says whether the job's projected firings can be weighed,
// and why not.
func firingsUsable(j *timers.Job, projected bool, fs []timers.Firing) (bool, Unused) {
	switch {
	case !projected:
		return false, UnusedNotProjected
	case j.IdleNow:
		return false, UnusedIdleNow
	case unpredictable(j, fs):
		return false, UnusedUnpredictable
	}
	return true, ""
}

func unpredictable(j *timers.Job, fs []timers.Firing) bool {
	p := jobPeriod(j, fs)
	return j.RandomizedDelaySec > 0 && p > 0 && 2*j.RandomizedDelaySec >= p
}

// onsetOf is the stall onset of episode e: the recorded onset, else its
// start.
func onsetOf(e *Episode) time.Time {
	if e.Onset != nil {
		return e.Onset.Time
	}
	return e.Start
}

// groupShare is the share of episode i's I/O done by the jobs whose first
// process started within one wake-up of r's (r included), and their
// names; 0 and nil when r started alone.
func (mc *modelCtx) groupShare(r *jobRun, all []*jobRun, i int) (float64, []string) {
	e := &mc.res.Episodes[i]
	if r.first[i].IsZero() || e.IOBytes == 0 {
		return 0, nil
	}
	sum := r.bytes[i]
	var names []string
	for _, x := range all {
		if x == r || x.bytes[i] < CreditFloor || x.first[i].IsZero() {
			continue
		}
		if absDur(x.first[i].Sub(r.first[i])) <= mc.wake {
			sum += x.bytes[i]
			names = append(names, x.job.Name)
		}
	}
	if len(names) == 0 {
		return 0, nil
	}
	return float64(sum) / float64(e.IOBytes), names
}

// evalJob decides whether the job explains episodes, and with what
// evidence.
func (mc *modelCtx) evalJob(r *jobRun, all []*jobRun, fs []timers.Firing, closest []time.Duration, projected bool) *Culprit {
	res, o, job := mc.res, mc.o, r.job
	n := len(res.Episodes)
	pf := &Proof{ProcessesRecorded: mc.recorded, Ran: len(r.procs) > 0, PFiring: 1, Cap: 1,
		FiringsMatched: []time.Time{}, FiringsMissed: []time.Time{}, Ties: []Tie{}, Credits: []EpisodeCredit{}}
	pf.Unpredictable = unpredictable(job, fs)
	for _, p := range r.procs {
		pf.Ties = append(pf.Ties, *r.own.tie(p))
	}
	if len(pf.Ties) > 20 {
		pf.Ties = pf.Ties[:20]
	}

	// Credits: its share of each episode's I/O.
	credited := map[int]bool{}
	with := map[string]bool{}
	for i := range res.Episodes {
		e := &res.Episodes[i]
		var share, gs, ms float64
		var names []string
		if e.IOBytes > 0 {
			share = float64(r.bytes[i]) / float64(e.IOBytes)
			gs, names = mc.groupShare(r, all, i)
		}
		if e.MemTaken > 0 {
			ms = float64(r.mem[i]) / float64(e.MemTaken)
		}
		ioOK := r.bytes[i] >= CreditFloor && (share >= MinShare || gs >= MinShare)
		memOK := r.mem[i] >= CreditFloor && ms >= MinShare
		if !ioOK && !memOK {
			continue
		}
		if !ioOK {
			names = nil
		}
		c := EpisodeCredit{Episode: i, Start: e.Start, Bytes: r.bytes[i], AllBytes: e.IOBytes, Share: round3(share),
			MemBytes: r.mem[i], MemAll: e.MemTaken, MemShare: round3(ms)}
		if names != nil {
			c.GroupShare = round3(gs)
			for _, nm := range names {
				with[nm] = true
			}
		}
		if !r.first[i].IsZero() {
			l := math.Round(onsetOf(e).Sub(r.first[i]).Seconds()*10) / 10
			c.LeadS = &l
		}
		credited[i] = true
		pf.Credits = append(pf.Credits, c)
	}
	for nm := range with {
		pf.FiresWith = append(pf.FiresWith, nm)
	}
	slices.Sort(pf.FiresWith)

	// Firings.
	period, lag, ws := jobWindows(res, job, fs, o)
	slack := res.Interval
	use, why := firingsUsable(job, projected, fs)
	pf.FiringsUsed, pf.FiringsUnused = use, why
	counted, matched, paper := 0, 0, 0
	fireEps := map[int]bool{}
	if use {
		var windowSum, reach time.Duration
		for _, w := range ws {
			hit, onPaper := false, false
			for i := range res.Episodes {
				s := res.Episodes[i].Start
				inWin := !s.Before(w.from) && !s.After(w.to)
				if inWin && w.inRec {
					onPaper = true
				}
				if mc.recorded && !credited[i] {
					continue
				}
				if inWin && absDur(s.Sub(w.earliest)) <= closest[i]+slack {
					fireEps[i], hit = true, true
					if w.inRec {
						reach = max(reach, s.Sub(w.from))
					}
				}
			}
			if onPaper {
				paper++
			}
			if !w.inRec {
				continue
			}
			counted++
			if hit {
				matched++
				pf.FiringsMatched = append(pf.FiringsMatched, w.earliest)
			} else {
				pf.FiringsMissed = append(pf.FiringsMissed, w.earliest)
			}
			windowSum += w.to.Sub(w.from)
		}
		if counted == 0 {
			pf.FiringsUsed, pf.FiringsUnused = false, UnusedNoneInRecording
		} else {
			// With episodes at random times a window of width w holds one
			// of n episode starts with probability q = 1 − (1 − w/span)^n;
			// w is the part of the window the matched episodes used.
			span := res.End.Sub(res.Start)
			w := float64(windowSum) / float64(counted)
			if matched > 0 {
				w = math.Min(w, float64(reach+slack))
			}
			q := 1 - math.Pow(1-math.Min(1, w/float64(span)), float64(n))
			pf.PFiring = binomialTail(counted, matched, q)
		}
	}

	// Null model: its activity outside episodes, at no less than half
	// the rate it had in its credited episodes.
	act := mc.presence(r.procs, pf.Credits)
	m := 0
	for _, in := range mc.inEp {
		if !in {
			m++
		}
	}
	pf.Presence = round4(float64(len(act)+1) / float64(m+2))
	pf.PresentIntervals, pf.OutsideIntervals = len(act), m
	pf.EpisodeIntervals = round4(mc.epLen)
	pf.EpisodeChance = round4(1 - math.Pow(1-pf.Presence, mc.epLen))
	k := len(pf.Credits)
	pf.PNull = binomialTail(n, k, pf.EpisodeChance)

	// Runs: episodes with its I/O, and stretches of activity outside.
	present := 0
	for i := range res.Episodes {
		if r.bytes[i] > 0 || !r.first[i].IsZero() {
			present++
		}
	}
	outside := 0
	keys := make([]int, 0, len(act))
	for x := range act {
		keys = append(keys, x)
	}
	sort.Ints(keys)
	for i, x := range keys {
		if i == 0 || x > keys[i-1]+1 {
			outside++
		}
	}
	pf.Runs = present + outside

	shares := make([]float64, 0, k)
	timed, late := 0, 0
	for _, c := range pf.Credits {
		// Its own share: a timer that rode along in a wake-up did only
		// its part of the harm.
		shares = append(shares, math.Max(c.Share, c.MemShare))
		if c.LeadS != nil {
			timed++
			if *c.LeadS < -res.Interval.Seconds() {
				late++
			}
		}
	}
	if len(shares) > 0 {
		pf.Share = round3(median(shares))
	}
	pf.Late = timed > 0 && late == timed
	if k > 0 && pf.Share < MinShare {
		pf.Cap = math.Min(pf.Cap, RideAlongCap)
	}
	// Naming.
	named := false
	switch {
	case !mc.recorded:
		// No per-process data: the schedule alone, with that limit.
		fireOK := pf.FiringsUsed && job.Active && counted >= 2 && matched >= 2 &&
			2*matched >= counted && len(fireEps) >= 2 && pf.PFiring < MaxChance
		if fireOK {
			named = true
			pf.Cap = BlindCap
		}
	case k == 1:
		c := pf.Credits[0]
		late := c.LeadS != nil && *c.LeadS < -res.Interval.Seconds()
		if math.Max(c.Share, c.GroupShare) >= SoloShare && !late {
			named = true
			pf.Cap = SoloCap
		}
	case k >= 2:
		// Chance ruled out; or, in a recording too short for that, the
		// bar of a single credit met every time: it did most of the I/O
		// (or took most of the memory) and started no later than the
		// stall. Its confidence then says how weak the chance test was.
		// A timer of a coalesced wake-up is named with its group: the
		// wake-up's share counts for the bar (its own share still sets
		// its confidence, capped at RideAlongCap).
		var gshares []float64
		for _, c := range pf.Credits {
			gshares = append(gshares, math.Max(math.Max(c.Share, c.MemShare), c.GroupShare))
		}
		named = math.Min(pf.PNull, pf.PFiring) < MaxChance || (median(gshares) >= SoloShare && !pf.Late)
	}
	if !named {
		if mc.recorded && !pf.Ran && paper > 0 {
			res.NotRun = append(res.NotRun, NotRun{Name: job.Name, Job: job, FiringsNear: paper})
		} else if mc.recorded && !pf.Ran && !use && projected && paperHits(res, ws) > 0 {
			res.NotRun = append(res.NotRun, NotRun{Name: job.Name, Job: job, FiringsUnused: pf.FiringsUnused})
		}
		return nil
	}

	pf.P = math.Min(pf.PNull, pf.PFiring)
	if !mc.recorded {
		pf.P = pf.PFiring
	}
	pf.Strength = round4(strength(pf.P))
	switch {
	case pf.FiringsUsed && counted > 0:
		pf.Repeat = round3(float64(matched) / float64(counted))
	case mc.recorded:
		pf.Repeat = round3(float64(k) / float64(max(k, pf.Runs)))
	}
	if !mc.recorded {
		pf.Repeat = round3(float64(matched) / float64(max(1, counted)))
	}

	c := &Culprit{Name: job.Name, Kind: KindCron, Job: job, EpisodesTotal: n, Period: period,
		Firings: counted, FiringsMatched: matched, Proof: pf}
	if job.Source == timers.Systemd {
		c.Kind = KindTimer
	}
	explained := map[int]bool{}
	for i := range credited {
		explained[i] = true
	}
	if !mc.recorded {
		for i := range fireEps {
			explained[i] = true
		}
	}
	for i := range explained {
		c.Episodes = append(c.Episodes, i)
	}
	slices.Sort(c.Episodes)
	c.EpisodesExplained = len(c.Episodes)

	// Its processes, summed by program over the credited episodes.
	byProg := map[string]*ProcActivity{}
	var total uint64
	for _, i := range c.Episodes {
		for _, pa := range r.procIn[i] {
			key := pa.Program
			a := byProg[key]
			if a == nil {
				a = &ProcActivity{Comm: pa.Comm, Program: pa.Program, Unit: pa.Unit, Cmdline: pa.Cmdline, StartedBy: pa.StartedBy}
				byProg[key] = a
			}
			a.ReadBytes += pa.ReadBytes
			a.WriteBytes += pa.WriteBytes
			total += pa.Bytes()
		}
	}
	for _, a := range byProg {
		c.Processes = append(c.Processes, *a)
	}
	slices.SortFunc(c.Processes, func(a, b ProcActivity) int {
		if x := cmp.Compare(b.Bytes(), a.Bytes()); x != 0 {
			return x
		}
		return cmp.Compare(a.Program, b.Program)
	})
	if k > 0 {
		c.BytesPerEpisode = total / uint64(k)
	}
	c.Confidence = pf.Confidence()
	c.Lag, c.Projected = lag, projected
	return c
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }
func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// recurringUnexplained reports a period whose episodes the named jobs do
// not explain, as the program that did their I/O or as unknown.
func (mc *modelCtx) recurringUnexplained(named []Culprit) *Culprit {
	res, sr := mc.res, mc.sr
	p := res.Period
	explained := map[int]bool{}
	for _, c := range named {
		for _, e := range c.Episodes {
			explained[e] = true
		}
	}
	// execOnly: the episodes show no period (on a busy host runs merge
	// or miss), so only a program whose own starts recur (its exec
	// events) may be named, from all unexplained episodes.
	execOnly := p == nil
	var un []int
	if execOnly {
		if !mc.recorded {
			return nil
		}
		for i := range res.Episodes {
			if !explained[i] {
				un = append(un, i)
			}
		}
	} else {
		for _, m := range p.Members {
			if !explained[m] {
				un = append(un, m)
			}
		}
		if 2*len(un) < len(p.Members) {
			return nil
		}
	}
	if len(un) < periodMinHits {
		return nil
	}
	// A program whose runs' starts recur (exec events) is credited with
	// every unexplained episode, on the episodes' schedule or not: runs
	// that merge or wander on a busy host are still its runs.
	onSched := map[int]bool{}
	for _, i := range un {
		onSched[i] = true
	}
	scan := un
	if mc.recorded && !execOnly {
		scan = nil
		for i := range res.Episodes {
			if !explained[i] {
				scan = append(scan, i)
			}
		}
	}
	// Programs credited with the unexplained recurring episodes: their
	// processes' share of each episode's I/O, as for jobs.
	type agg struct {
		ProcActivity
		eps    map[int]bool
		pids   map[int]bool
		shares []float64
		procs  map[*proc]bool
		roots  map[*proc]bool // the runs' oldest processes
		// epBytes is its I/O per credited episode, epIO its reads and
		// writes.
		epBytes map[int]uint64
		epIO    map[int]ProcActivity
		// null model: intervals outside episodes as busy, of all outside
		present, outside int
	}
	progs := map[string]*agg{}
	for _, i := range scan {
		e := &res.Episodes[i]
		per := map[string]*ProcActivity{}
		var order []string
		for _, pa := range mc.sr.parts[e.Start] {
			if pa.Program == "" || pa.Bytes() == 0 && !pa.Started {
				continue
			}
			// A process's I/O is its run's: the program of the oldest
			// ancestor started for this run (a script's dd and cat are
			// the script's).
			pr := mc.pt.lookup(pa.PID, pa.start, e.End)
			key, root := pa.Program, pr
			if pr != nil {
				root = mc.runRoot(pr, e)
				if rp := programOf(root.comm, root.cmdline); rp != "" {
					key = rp
				}
			}
			x := per[key]
			if x == nil {
				x = &ProcActivity{}
				per[key] = x
				order = append(order, key)
			}
			x.ReadBytes += pa.ReadBytes
			x.WriteBytes += pa.WriteBytes
			a := progs[key]
			if a == nil {
				a = &agg{ProcActivity: ProcActivity{Comm: pa.Comm, Program: key, Unit: pa.Unit, Cmdline: pa.Cmdline},
					eps: map[int]bool{}, pids: map[int]bool{}, procs: map[*proc]bool{}, roots: map[*proc]bool{}}
				if root != nil && root != pr {
					a.Comm, a.Cmdline, a.Unit = root.comm, root.cmdline, root.unit
				}
				progs[key] = a
			}
			a.pids[pa.PID] = true
			if pr != nil {
				a.procs[pr] = true
				a.roots[root] = true
				if a.StartedBy == nil {
					for _, anc := range mc.pt.ancestors(root) {
						a.StartedBy = append(a.StartedBy, anc.label())
					}
				}
			}
		}
		for _, prog := range order {
			x := per[prog]
			if x.Bytes() < CreditFloor || e.IOBytes == 0 || float64(x.Bytes()) < MinShare*float64(e.IOBytes) {
				continue
			}
			a := progs[prog]
			a.eps[i] = true
			if a.epBytes == nil {
				a.epBytes, a.epIO = map[int]uint64{}, map[int]ProcActivity{}
			}
			a.epBytes[i] = x.Bytes()
			a.epIO[i] = ProcActivity{ReadBytes: x.ReadBytes, WriteBytes: x.WriteBytes}
		}
	}
	// sum totals a's credited episodes: its I/O and shares.
	sum := func(a *agg) {
		a.ReadBytes, a.WriteBytes, a.shares = 0, 0, a.shares[:0]
		for _, i := range scan {
			if !a.eps[i] {
				continue
			}
			e := &res.Episodes[i]
			x := a.epIO[i]
			a.ReadBytes += x.ReadBytes
			a.WriteBytes += x.WriteBytes
			a.shares = append(a.shares, float64(x.Bytes())/float64(e.IOBytes))
		}
	}
	m := 0
	for _, in := range mc.inEp {
		if !in {
			m++
		}
	}
	nullP := func(a *agg) (float64, float64) {
		var ps []*proc
		for pr := range a.procs {
			ps = append(ps, pr)
		}
		var cr []EpisodeCredit
		for i := range a.eps {
			cr = append(cr, EpisodeCredit{Episode: i, Bytes: a.epBytes[i]})
		}
		act := mc.presence(ps, cr)
		q := float64(len(act)+1) / float64(m+2)
		qe := 1 - math.Pow(1-q, mc.epLen)
		a.present, a.outside = len(act), m
		return binomialTail(len(res.Episodes), len(a.eps), qe), q
	}
	var cands []*agg
	chance := false // a program credited twice or more, chance not ruled out
	execP := map[*agg]*Period{}
	for _, a := range progs {
		ep := mc.execPeriod(a.Program)
		if ep == nil {
			// Without its own recurring starts, only the episodes on
			// their schedule count.
			for i := range a.eps {
				if !onSched[i] {
					delete(a.eps, i)
				}
			}
		}
		sum(a)
		if len(a.eps) < 2 || !specificProg(res, sr, a.Program) || !mc.specific(a.procs) {
			continue
		}
		if execOnly && (ep == nil || len(a.eps) < periodMinHits) {
			continue
		}
		execP[a] = ep
		if pn, _ := nullP(a); pn >= MaxChance && median(a.shares) < SoloShare {
			// Chance not ruled out, and not the dominant I/O either.
			chance = true
			continue
		}
		cands = append(cands, a)
	}
	slices.SortFunc(cands, func(a, b *agg) int {
		if c := cmp.Compare(len(b.eps), len(a.eps)); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Bytes(), a.Bytes()); c != 0 {
			return c
		}
		return cmp.Compare(a.Program, b.Program)
	})
	if execOnly && len(cands) == 0 {
		return nil
	}
	c := &Culprit{Kind: KindUnknown, Name: "unknown", EpisodesTotal: len(res.Episodes),
		Episodes: un, EpisodesExplained: len(un)}
	if p != nil {
		c.Period = p.Period
	}
	covered := map[int]bool{}
	for _, a := range cands {
		for e := range a.eps {
			covered[e] = true
		}
	}
	// pool: the recurring episodes no job explains, and those credited
	// to a program by its own recurring starts.
	var pool []int
	for _, i := range scan {
		if onSched[i] || covered[i] {
			pool = append(pool, i)
		}
	}
	un = pool
	if len(cands) > 0 && 2*len(covered) >= len(un) {
		best := cands[0]
		c.Kind, c.Name = KindProcess, best.Program
		c.Episodes = c.Episodes[:0]
		for _, e := range un {
			if covered[e] {
				c.Episodes = append(c.Episodes, e)
			}
		}
		c.EpisodesExplained = len(c.Episodes)
		var total uint64
		for _, a := range cands {
			c.Processes = append(c.Processes, a.ProcActivity)
			total += a.Bytes()
		}
		c.BytesPerEpisode = total / uint64(len(covered))
		pn, q := nullP(best)
		// The period is that of its own starts when they show one (exec
		// events: exact), else the episodes'.
		sp := execP[best]
		score := 0.0
		switch {
		case sp != nil && (p == nil || sp.Score >= p.Score):
			c.Period, score = sp.Period, sp.Score
		case p != nil:
			score = p.Score
		}
		pf := &Proof{ProcessesRecorded: true, Ran: true, Ties: []Tie{}, FiringsMatched: []time.Time{}, FiringsMissed: []time.Time{},
			PFiring: 1, FiringsUnused: UnusedNoJob, Cap: 1,
			Presence: round4(q), PresentIntervals: best.present, OutsideIntervals: best.outside, EpisodeIntervals: round4(mc.epLen), EpisodeChance: round4(1 - math.Pow(1-q, mc.epLen)), PNull: pn,
			P: pn, Strength: round4(strength(pn)), Share: round3(median(best.shares)),
			Repeat: round3(score * float64(len(covered)) / float64(len(un)))}
		if sp != nil {
			pf.Starts = mc.execStarts(best.Program)
			pf.StartsPeriod = &StartsFit{Period: sp.Period, PeriodS: sp.Period.Round(time.Millisecond).Seconds(),
				JitterS: sp.Jitter.Round(time.Millisecond).Seconds(), Matched: sp.Matched, Expected: sp.Expected, Score: sp.Score}
		}
		for _, i := range c.Episodes {
			if best.eps[i] {
				e := &res.Episodes[i]
				b := best.epBytes[i]
				pf.Credits = append(pf.Credits, EpisodeCredit{Episode: i, Start: e.Start, Bytes: b, AllBytes: e.IOBytes,
					Share: round3(float64(b) / float64(max(1, e.IOBytes)))})
			}
		}
		pf.Runs = len(best.eps)
		c.Proof = pf
		// One long-lived process doing this on a period has a schedule
		// inside, and so has a service that forks a worker each time
		// (postgres's autovacuum); a new process each time outside any
		// unit is started by something else: a script, a loop.
		c.NewEachTime = len(best.roots) >= len(best.eps) && best.Unit == ""
		c.Runs = len(best.roots)
		for _, a := range cands {
			c.Programs = append(c.Programs, ProgramCredit{Program: a.Program, Share: median(a.shares), Episodes: len(a.eps), Of: len(un)})
		}
		c.Confidence = pf.Confidence()
		return c
	}
	if p == nil || p.Matched < unknownMinHits {
		// A handful of episodes fits some lattice by chance: without a
		// process to name, too few to call a recurrence a cause.
		return nil
	}
	c.Missing = mc.missing(chance)
	c.Confidence = math.Round(p.Score*0.5*100) / 100
	return c
}

// runRoot is the oldest of p and its recorded ancestors started for
// episode e's run (no earlier than one wake-up before e began): a
// script's dd and cat belong to the script, a loop's script to itself.
func (mc *modelCtx) runRoot(p *proc, e *Episode) *proc {
	from := e.Start.Add(-mc.wake)
	root := p
	for _, a := range mc.pt.ancestors(p) {
		if a.execAt.IsZero() || a.execAt.Before(from) || a.execAt.After(e.End) {
			break
		}
		root = a
	}
	return root
}

// execStarts are the recorded exec times of program prog's runs: its
// processes whose parent is not prog itself, in time order.
func (mc *modelCtx) execStarts(prog string) []time.Time {
	var out []time.Time
	for _, p := range mc.pt.all {
		if p.execAt.IsZero() || programOf(p.comm, p.cmdline) != prog {
			continue
		}
		if par := mc.pt.parent(p); par != nil && programOf(par.comm, par.cmdline) == prog {
			continue
		}
		out = append(out, p.execAt)
	}
	slices.SortFunc(out, time.Time.Compare)
	return out
}

// execPeriod is the period of program prog's recorded starts, nil when
// they show none.
func (mc *modelCtx) execPeriod(prog string) *Period {
	st := mc.execStarts(prog)
	if len(st) < periodMinHits {
		return nil
	}
	return EstimatePeriod(st, mc.res.Start, mc.res.End, 4*mc.res.Interval)
}

// specific reports whether procs did at least three times as much I/O
// per interval inside episodes as outside them, so a process that is
// always busy (the service itself) is not blamed for the episodes.
func (mc *modelCtx) specific(procs map[*proc]bool) bool {
	var inB, outB float64
	inN, outN := 0, 0
	for _, in := range mc.inEp {
		if in {
			inN++
		} else {
			outN++
		}
	}
	for p := range procs {
		for _, a := range p.active {
			if a.k >= len(mc.inEp) {
				continue
			}
			if mc.inEp[a.k] {
				inB += float64(a.b)
			} else {
				outB += float64(a.b)
			}
		}
	}
	if inN == 0 {
		return false
	}
	if outN == 0 {
		return true
	}
	return inB/float64(inN) >= 3*outB/float64(outN)
}

// missing says what the recording lacked to name a recurrence's cause;
// chance: a recorded program did the I/O of two or more of its episodes,
// too few to rule out chance.
func (mc *modelCtx) missing(chance bool) []Missing {
	if !mc.recorded {
		return []Missing{MissingProcesses}
	}
	var out []Missing
	if chance {
		out = append(out, MissingEpisodes)
	}
	if sr := mc.sr; sr.denied > 0 && 2*sr.denied >= sr.listed {
		out = append(out, MissingIOAccess)
	}
	if !mc.sr.kernelEvents && !collectorOn(&mc.sr.Header, "events") {
		out = append(out, MissingEvents)
	}
	if len(out) == 0 {
		out = append(out, MissingIO)
	}
	return out
}

// presence returns the intervals outside episodes in which procs together
// did I/O at no less than half their median rate in the credited episodes
// (any I/O when there is no credit): the null model's "present".
func (mc *modelCtx) presence(procs []*proc, credits []EpisodeCredit) map[int]bool {
	var rates []float64
	for _, c := range credits {
		e := &mc.res.Episodes[c.Episode]
		if d := e.End.Sub(e.Start).Seconds(); d > 0 {
			rates = append(rates, float64(c.Bytes)/d)
		}
	}
	thr := 0.0
	if len(rates) > 0 {
		thr = median(rates) / 2
	}
	per := map[int]uint64{}
	for _, p := range procs {
		for _, a := range p.active {
			if a.k < len(mc.inEp) && !mc.inEp[a.k] {
				per[a.k] += a.b
			}
		}
	}
	act := map[int]bool{}
	for k, b := range per {
		if b > 0 && float64(b) >= thr*mc.sr.ivs[k].Dt.Seconds() {
			act[k] = true
		}
	}
	return act
}

// CulpritsAt returns the culprits (best first) credited with an episode
// that overlaps [from, to]; kind unknown is left out: it names nothing.
func CulpritsAt(res *Result, from, to time.Time) []Culprit {
	var out []Culprit
	for _, c := range res.Culprits {
		if c.Kind == KindUnknown {
			continue
		}
		for _, i := range c.Episodes {
			e := &res.Episodes[i]
			if !e.End.Before(from) && !e.Start.After(to) {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// paperHits counts the firings within the recording whose window holds an
// episode start: firings on paper near episodes.
func paperHits(res *Result, ws []window) int {
	n := 0
	for _, w := range ws {
		if !w.inRec {
			continue
		}
		for i := range res.Episodes {
			if s := res.Episodes[i].Start; !s.Before(w.from) && !s.After(w.to) {
				n++
				break
			}
		}
	}
	return n
}
