package correlate

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/timers"
)

// EpisodeCredit is a culprit's part in one episode it is credited with.
type EpisodeCredit struct {
	Episode int       `json:"episode"`
	Start   time.Time `json:"start"`
	Bytes   uint64    `json:"bytes"` // its processes' I/O in the episode
	// AllBytes is the I/O of every recorded process in the episode that
	// can cause the scope's reclaim (Proof.ShareScope); OutsideBytes that
	// of the processes outside a cgroup scope, left out of it. AllBytes +
	// OutsideBytes is every recorded process's I/O.
	AllBytes     uint64  `json:"all_bytes"`
	OutsideBytes uint64  `json:"outside_bytes,omitempty"`
	Share        float64 `json:"share"` // Bytes / AllBytes; Chain.CostShare when ChainJudged
	// UnknownBytes is the part of Bytes done by its processes whose
	// cgroup was not recorded (ProcActivity.CgroupUnknown): under a
	// cgroup scope they count, as they may be in the group.
	UnknownBytes uint64 `json:"unknown_bytes,omitempty"`
	// MemBytes is its processes' RSS growth in the episode, MemAll that
	// of every recorded RSS holder that grew (Sample.RSS's largest), and
	// MemShare their ratio: the memory it took.
	// MemOutside is what processes outside a cgroup scope took, left out
	// of MemAll.
	MemBytes   uint64  `json:"mem_bytes"`
	MemAll     uint64  `json:"mem_all_bytes"`
	MemOutside uint64  `json:"mem_outside_bytes,omitempty"`
	MemShare   float64 `json:"mem_share"`
	// GroupShare is the share of the jobs that started with it in one
	// wake-up (FiresWith), itself included; 0 when alone.
	GroupShare float64 `json:"group_share,omitempty"`
	// Chain is its part of the episode's traced page-cache chain (nil
	// when the episode was not traced): what its activity cost the
	// victim. ChainJudged: the chain decided this credit.
	Chain       *ChainCredit `json:"chain,omitempty"`
	ChainJudged bool         `json:"chain_judged,omitempty"`
	// LeadS is how many seconds before the stall onset (the recorded
	// onset, else the episode's start) its first process started;
	// negative: after. Nil when its processes were already running.
	LeadS *float64 `json:"lead_s,omitempty"`
}

// Proof is a culprit's structured evidence: what its confidence is
// computed from ([Proof.confidence]), so a skeptic can recompute it.
type Proof struct {
	// ProcessesRecorded: the recording has per-process I/O or process
	// events. Ran: a process of the culprit was recorded.
	ProcessesRecorded bool `json:"processes_recorded"`
	Ran               bool `json:"ran"`
	// ShareScope says over which processes a credit's shares are taken:
	// ScopeAll (every recorded process) or ScopeCgroup (under a --cgroup
	// scope, the processes that can cause the group's reclaim: in the
	// group, a descendant or a non-root ancestor, or whose cgroup was not
	// recorded; a process outside it counts neither for the culprit nor
	// in the denominator).
	ShareScope string `json:"share_scope"`
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
	// FiringsCutOff are firings within the recording that no episode
	// followed but whose window (Earliest − one interval to Latest + the
	// lag tolerance) the recording's end cut off: neither matched nor
	// missed, since their episode may have begun after the end.
	FiringsCutOff []time.Time `json:"firings_cut_off,omitempty"`
	PFiring       float64     `json:"p_firing"`
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
	// known start; Cap: Model.SoloCap, Model.BlindCap, Model.RideAlongCap or 1.
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
	// period (estimatePeriod, nil when they show none). A period from
	// exact exec times stands where episodes merge or are missed.
	Starts       []time.Time `json:"starts,omitempty"`
	StartsPeriod *StartsFit  `json:"starts_period,omitempty"`
	// OOMKilled are its processes ("comm pid") the kernel log names as
	// OOM-killed in the analysed scope during one of its credited
	// episodes (OOMKill.Victims): it overflowed the limit itself.
	OOMKilled []string `json:"oom_killed,omitempty"`
	// SharedWith are the other culprits credited with some of its
	// episodes: a named job and a process pattern whose runs did their
	// own share of the same episodes (sharedPatterns). Each counts such
	// an episode as explained, with its own share of the episode's I/O.
	SharedWith []string `json:"shared_with,omitempty"`
}

// StartsFit is the period of a process culprit's recorded starts
// (Proof.StartsPeriod): estimatePeriod of Proof.Starts.
type StartsFit struct {
	Period   time.Duration `json:"-"`
	PeriodS  float64       `json:"period_s"`
	JitterS  float64       `json:"jitter_s"`
	Matched  int           `json:"matched"`  // starts on the schedule
	Expected int           `json:"expected"` // schedule points within the recording
	Score    float64       `json:"score"`
}

// confidence is min(Cap, Strength × (0.5 + 0.5 × Share) × Repeat ×
// (lateFactor if Late)), rounded to 0.01; lateFactor is
// Model.LateFactor.
func (p *Proof) confidence(lateFactor float64) float64 {
	c := p.Strength * (0.5 + 0.5*p.Share) * p.Repeat
	if p.Late {
		c *= lateFactor
	}
	c = math.Min(c, p.Cap)
	return math.Round(c*100) / 100
}

func strength(p float64) float64 {
	return math.Min(1, -math.Log10(math.Max(p, 1e-12))/4)
}

// NotRun is a job of the recording's inventory that the verdict does not
// name, with why (Kind): every job that is not a culprit is one, when
// the recording has episodes. FiringsNear of its firings fell near
// episodes (Kind NotRunScheduled), or its firings were not weighed, for
// FiringsUnused; OutsideScope is set for a job that ran, but only
// outside the --cgroup group analysed; Ran for one that ran in the
// scope and was not named; Cgroup for one whose unit runs outside the
// group. report writes the reason.
type NotRun struct {
	Name          string
	Kind          NotNamedKind
	Job           *timers.Job
	FiringsNear   int
	FiringsUnused Unused
	OutsideScope  *RanOutside
	Ran           *RanUnnamed
	Cgroup        string // Kind NotRunOtherCgroup: the cgroup its unit runs in
	Group         string // Kind NotRunOtherCgroup: the analysed group (record.Header.Cgroup)
	// Firings and Matched are, without per-process data (Kind
	// NotRunUnknown), its firings within the recording and how many an
	// episode followed.
	Firings, Matched int
}

// RanOutside is a job every recorded process of which ran outside the
// --cgroup group analysed (NotRun.OutsideScope): it cannot cause the
// group's reclaim, so it is credited with none of the group's episodes.
type RanOutside struct {
	Group     string   // the analysed group: record.Header.Cgroup
	Cgroups   []string // its processes' cgroups (/proc/PID/cgroup), sorted
	Processes int      // its recorded processes
	Episodes  int      // the group's episodes in which its processes did I/O
	Bytes     uint64   // the I/O its processes did in them, bytes
}

// The processes a credit's shares are taken over (Proof.ShareScope).
const (
	ScopeAll    = "all"
	ScopeCgroup = "cgroup"
)

// modelCtx is what every job's evaluation shares.
type modelCtx struct {
	res      *Result
	sr       *Series
	o        Options
	pt       *procTable
	recorded bool
	scope    string  // ScopeAll or ScopeCgroup
	inEp     []bool  // per interval: inside an episode
	outside  int     // intervals outside every episode: the null model's m
	epLen    float64 // mean episode intervals + 1
	wake     time.Duration
	unitData bool                      // some recorded process was in a unit, or in a cgroup other than the root
	runs     map[*proc]*run            // runOf's memo
	patterns map[string]map[*proc]bool // patternProcs' memo
	persist  map[*proc]bool            // persistent's memo
	// chain is the victim's side of each episode's traced page-cache
	// chain (chainEpisodes), nil where it was not traced.
	chain []*ChainEpisode
	// reapedTied marks the reaped-children parts ({episode, index in
	// Series.parts}) a job claimed.
	reapedTied map[[2]int]bool
}

// jobRun is one job's activity per episode.
type jobRun struct {
	job    *timers.Job
	own    *owner
	procs  []*proc
	bytes  []uint64     // per episode
	unk    []uint64     // per episode: the part of bytes whose cgroup was not recorded
	out    []uint64     // per episode: its processes' I/O outside the cgroup scope
	mem    []uint64     // per episode: RSS growth of its processes
	first  []time.Time  // per episode: its first exec in or just before it, zero if none
	procIn [][]procPart // per episode: its processes there
	// chainRefuted counts the episodes in which its I/O met the
	// correlation bar but the traced chain judged it had cost the victim
	// too little; chainAdded and chainCost sum its chain there.
	chainRefuted          int
	chainAdded, chainCost uint64
}

// rankCulprits is the culprit model (docs/analyze.md, "The culprit
// model"): it fills res.Culprits and Episode.Culprit through its stages,
// in the order they run: newModelCtx (what every stage shares: the
// process table, which intervals are in episodes, the traced chain),
// gatherJobs (the candidates: the recording's jobs and their firings),
// tieJobs (tie processes to jobs), evalJob for each job (credit, weigh
// against the firings and the null model, name, explain), the process
// patterns (recurringUnexplained, sharedPatterns) and rankOrder (rank).
func rankCulprits(res *Result, sr *Series, o Options) {
	h := &sr.Header
	res.ProcessesRecorded = sr.sawProc || collectorOn(h, "procs") || collectorOn(h, "events")
	if len(res.Episodes) == 0 {
		return
	}
	mc := newModelCtx(res, sr, o)
	jobs, firings, projected := mc.gatherJobs()
	runs := mc.tieJobs(jobs)
	// Only firings that can happen contest an episode.
	var usable []timers.Job
	for j := range jobs {
		if ok, _ := firingsUsable(&jobs[j], projected, firings[jobs[j].Name]); ok {
			usable = append(usable, jobs[j])
		}
	}
	closest := closestFirings(res, usable, firings, o)
	var cs []Culprit
	for j := range jobs {
		if c := mc.evalJob(runs[j], runs, firings[jobs[j].Name], closest, projected); c != nil {
			cs = append(cs, *c)
		}
	}
	cs = mc.addPatterns(cs, runs)
	cs = mc.splitUndecided(cs)
	rankOrder(res, cs)
}

// newModelCtx is what every stage of the culprit model shares: the
// process table, the share scope, which intervals lie in episodes and
// the mean episode length (the null model's), and each episode's traced
// chain and victim waits, which it also sets on res.
func newModelCtx(res *Result, sr *Series, o Options) *modelCtx {
	h := &sr.Header
	n := len(res.Episodes)
	mc := &modelCtx{res: res, sr: sr, o: o, recorded: res.ProcessesRecorded, wake: max(time.Duration(o.Model.WakeIntervals)*res.Interval, o.Model.WakeMin), scope: ScopeAll}
	if res.PSIScope == PSICgroup && h.Cgroup != "" {
		mc.scope = ScopeCgroup
	}
	mc.pt = buildProcTable(sr)
	mc.runs, mc.persist = map[*proc]*run{}, map[*proc]bool{}
	mc.fillStartedBy()
	mc.inEp = make([]bool, len(sr.intervals()))
	total := 0
	for i := range res.Episodes {
		total += res.Episodes[i].Intervals
	}
	mc.epLen = float64(total)/float64(n) + 1
	// Episodes are in time order and do not overlap: one sweep.
	ep := 0
	for k, iv := range sr.intervals() {
		for ep < n && res.Episodes[ep].End.Before(iv.End) {
			ep++
		}
		mc.inEp[k] = ep < n && !iv.Start.Before(res.Episodes[ep].Start) && !iv.End.After(res.Episodes[ep].End)
		if !mc.inEp[k] {
			mc.outside++
		}
	}
	mc.chainEpisodes()
	for i, ce := range mc.chain {
		res.Episodes[i].Chain = ce
	}
	for i, w := range victimWaits(sr, res.Episodes) {
		res.Episodes[i].VictimWaits = w
	}
	res.ChainTraced = sr.chainTraced
	return mc
}

// gatherJobs is the candidates stage: the recording's jobs (its header's
// inventory) and their firings over it, projected from one lag tolerance
// before it began (projected false, and a warning, when Options.Project
// is nil).
func (mc *modelCtx) gatherJobs() ([]timers.Job, map[string][]timers.Firing, bool) {
	res, o := mc.res, mc.o
	jobs := record.TimersJobs(mc.sr.Header.Jobs)
	firings := map[string][]timers.Firing{}
	projected := false
	if len(jobs) > 0 {
		if o.Project == nil {
			res.Warnings = append(res.Warnings, Warning{Kind: WarnNotProjected})
		} else {
			projected = true
			for _, f := range o.Project(jobs, res.Start.Add(-o.LagTolerance), res.End, res.Location) {
				firings[f.Job] = append(firings[f.Job], f)
			}
		}
	}
	return jobs, firings, projected
}

// tieJobs is the ties stage: each job's processes (owner, jobActivity)
// and their activity per episode; the reaped children's I/O no job
// claims is the episodes' UnattributedReapedBytes.
func (mc *modelCtx) tieJobs(jobs []timers.Job) []*jobRun {
	// A process in a unit is that unit's: another job running the same
	// program does not claim it (two timers of one tool, a loop's md5sum
	// and a timer's), owner.byProgram.
	// Cgroups other than the root say where a process ran even where no
	// unit is named (hand-made groups, containers): a timer's service
	// runs in its unit's, so a process recorded in another is not its.
	mc.unitData = slices.ContainsFunc(mc.pt.all, func(p *proc) bool {
		if len(p.units) > 0 {
			return true
		}
		c := mc.sr.cgroupOf(p.pid, p.start)
		return c != "" && c != "/"
	})
	runs := make([]*jobRun, len(jobs))
	mc.reapedTied = map[[2]int]bool{}
	for j := range jobs {
		runs[j] = mc.jobActivity(&jobs[j])
	}
	mc.unattributedReaped()
	return runs
}

// addPatterns adds to the named jobs cs the process patterns: the one
// that explains the recurring episodes no job does
// (recurringUnexplained), and those that share the named jobs' episodes
// (sharedPatterns), each listed in SharedWith of the culprits it shares
// episodes with.
func (mc *modelCtx) addPatterns(cs []Culprit, runs []*jobRun) []Culprit {
	if c := mc.recurringUnexplained(cs); c != nil {
		cs = append(cs, *c)
	}
	for _, sp := range mc.sharedPatterns(cs, runs) {
		for k := range cs {
			if cs[k].Proof != nil && slices.ContainsFunc(cs[k].Episodes, func(e int) bool { return slices.Contains(sp.Episodes, e) }) &&
				slices.Contains(sp.Proof.SharedWith, cs[k].Name) {
				cs[k].Proof.SharedWith = append(cs[k].Proof.SharedWith, sp.Name)
			}
		}
		cs = append(cs, sp)
	}
	return cs
}

// rankOrder is the rank stage: culprits that name a job or a process
// first, by episodes explained, then I/O per episode, confidence and
// name (culpritOrder); it numbers them (Rank) and gives each episode its
// first culprit's name, or its undecided jobs' (markUndecided). The
// undecided jobs are sorted the same way, unnumbered.
func rankOrder(res *Result, cs []Culprit) {
	slices.SortStableFunc(cs, culpritOrder)
	slices.SortStableFunc(res.Undecided, culpritOrder)
	for i := range cs {
		cs[i].Rank = i + 1
		for _, e := range cs[i].Episodes {
			if res.Episodes[e].Culprit == "" {
				res.Episodes[e].Culprit = cs[i].Name
			}
		}
	}
	res.Culprits = cs
	markUndecided(res)
}

// culpritOrder is the culprits' rank order (rankOrder).
func culpritOrder(a, b Culprit) int {
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
}

// unattributedReaped sets each episode's UnattributedReapedBytes: the
// in-scope I/O of reaped children (ProcActivity.Reaped) whose parent no
// job claimed in jobActivity.
func (mc *modelCtx) unattributedReaped() {
	for i := range mc.res.Episodes {
		e := &mc.res.Episodes[i]
		for k, pa := range mc.sr.parts[e.Start] {
			if pa.Reaped && !pa.OutsideScope && !mc.reapedTied[[2]int{i, k}] {
				e.UnattributedReapedBytes += pa.Bytes()
			}
		}
	}
}

// fillStartedBy gives every episode process its recorded ancestor chain
// (ProcActivity.StartedBy), from every exec event and sample of the
// recording, parent first.
func (mc *modelCtx) fillStartedBy() {
	for i := range mc.res.Episodes {
		e := &mc.res.Episodes[i]
		for _, list := range [][]ProcActivity{e.Processes, e.Started, e.Exited} {
			for k := range list {
				pa := &list[k]
				if pa.Reaped {
					// The children's chain starts at the parent that
					// reaped them.
					if p := mc.pt.lookup(pa.PPID, 0, e.End); p != nil && pa.StartedBy == nil {
						pa.StartedBy = append([]string{p.label()}, mc.startedBy(p)...)
					}
					continue
				}
				if p := mc.pt.lookup(pa.PID, 0, e.End); p != nil && pa.StartedBy == nil {
					pa.StartedBy = mc.startedBy(p)
				}
			}
		}
	}
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
	r.own.unitData = mc.unitData
	r.own.cgroupOf = func(p *proc) string { return mc.sr.cgroupOf(p.pid, p.start) }
	for _, p := range mc.pt.all {
		if slices.ContainsFunc(p.units, func(u string) bool { return slices.Contains(r.own.units, u) }) {
			r.own.ran = true
			break
		}
	}
	for _, p := range mc.pt.all {
		if r.own.tie(p) != nil {
			r.procs = append(r.procs, p)
		}
	}
	n := len(mc.res.Episodes)
	r.bytes, r.unk, r.out, r.mem, r.first, r.procIn = make([]uint64, n), make([]uint64, n), make([]uint64, n), make([]uint64, n), make([]time.Time, n), make([][]procPart, n)
	for i := range mc.res.Episodes {
		e := &mc.res.Episodes[i]
		for k, pa := range mc.sr.parts[e.Start] {
			p := mc.pt.lookup(pa.procPID(), pa.start, e.End)
			if p == nil || r.own.tie(p) == nil {
				continue
			}
			if pa.OutsideScope {
				// It cannot cause the group's reclaim: neither the job's
				// share nor the denominator counts it.
				r.out[i] += pa.Bytes()
				continue
			}
			if pa.Reaped {
				mc.reapedTied[[2]int{i, k}] = true
			}
			r.bytes[i] += pa.Bytes()
			if pa.CgroupUnknown {
				r.unk[i] += pa.Bytes()
			}
			r.mem[i] += pa.memGrowth
			if pa.Comm == "" {
				continue // seen only among the RSS holders
			}
			at := pa.execAt
			if at.IsZero() && !p.execAt.IsZero() && p.execAt.Before(e.Start) {
				// Started before the episode (its exec recorded): a job
				// whose allocation grew into the stall led it.
				at = p.execAt
			}
			if !at.IsZero() && (r.first[i].IsZero() || at.Before(r.first[i])) {
				r.first[i] = at
			}
			if t := r.own.tie(p); t != nil {
				pa.StartedBy = t.StartedBy
				if pa.Reaped {
					pa.StartedBy = append([]string{p.label()}, t.StartedBy...)
				}
			}
			r.procIn[i] = append(r.procIn[i], pa)
		}
	}
	return r
}

// ranOutside says whether every recorded process of the job ran outside
// the cgroup scope (their cgroups recorded, none related to the group),
// and what they did in the group's episodes; nil if not, or with the
// host's scope.
func (mc *modelCtx) ranOutside(r *jobRun) *RanOutside {
	if mc.scope != ScopeCgroup || len(r.procs) == 0 {
		return nil
	}
	group := mc.sr.Header.Cgroup
	o := &RanOutside{Group: group, Processes: len(r.procs)}
	for _, p := range r.procs {
		cg := mc.sr.cgroupOf(p.pid, p.start)
		if cg == "" || mc.sr.inScope(p.pid, cg) {
			return nil
		}
		if !slices.Contains(o.Cgroups, cg) {
			o.Cgroups = append(o.Cgroups, cg)
		}
	}
	slices.Sort(o.Cgroups)
	for _, b := range r.out {
		if b > 0 {
			o.Episodes++
			o.Bytes += b
		}
	}
	return o
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
	if r.first[i].IsZero() || e.scopeBytes() == 0 {
		return 0, nil
	}
	sum := r.bytes[i]
	var names []string
	for _, x := range all {
		if x == r || x.bytes[i] < mc.o.Model.CreditFloor || x.first[i].IsZero() {
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
	return float64(sum) / float64(e.scopeBytes()), names
}

// groupCost is the cost share (chain.go) of episode i of the jobs
// named in names (its wake-up group, groupShare) together with cc, the
// job's own part.
func (mc *modelCtx) groupCost(cc *ChainCredit, all []*jobRun, names []string, i int) float64 {
	ce := mc.chain[i]
	if ce == nil || ce.EvictedBytes == 0 {
		return 0
	}
	sum := cc.CostBytes
	for _, x := range all {
		if slices.Contains(names, x.job.Name) {
			if c := mc.chainCredit(i, func(p *proc) bool { return x.own.tie(p) != nil }); c != nil {
				sum += c.CostBytes
			}
		}
	}
	return round3(math.Min(1, float64(sum)/float64(ce.EvictedBytes)))
}

// evalJob decides whether the job explains episodes, and with what
// evidence, in the culprit model's stages (docs/analyze.md, "The
// culprit model"): credit its episodes (creditJob), weigh its firings
// (weighFirings) and the null model (weighNull), decide (nameJob) and
// explain (explainJob).
func (mc *modelCtx) evalJob(r *jobRun, all []*jobRun, fs []timers.Firing, closest []time.Duration, projected bool) *Culprit {
	pf := mc.newJobProof(r, fs)
	credited := mc.creditJob(r, all, pf)
	fe := mc.weighFirings(r, fs, closest, projected, credited, pf)
	mc.weighNull(r, pf)
	named, ev := mc.nameJob(r, pf, fe)
	if !named {
		ev.projected = projected
		mc.res.NotRun = append(mc.res.NotRun, mc.notNamed(r, pf, ev))
		return nil
	}
	return mc.explainJob(r, pf, fe, credited, projected)
}

// newJobProof starts a job's proof: how its recorded processes are its
// (Ties, at most 20) and whether its firing times say anything.
func (mc *modelCtx) newJobProof(r *jobRun, fs []timers.Firing) *Proof {
	pf := &Proof{ProcessesRecorded: mc.recorded, Ran: len(r.procs) > 0, PFiring: 1, Cap: 1, ShareScope: mc.scope,
		FiringsMatched: []time.Time{}, FiringsMissed: []time.Time{}, Ties: []Tie{}, Credits: []EpisodeCredit{}}
	pf.Unpredictable = unpredictable(r.job, fs)
	for _, p := range r.procs {
		pf.Ties = append(pf.Ties, *r.own.tie(p))
	}
	if len(pf.Ties) > 20 {
		pf.Ties = pf.Ties[:20]
	}

	return pf
}

// creditJob is the credit stage: per episode, its share of the I/O (or
// of the memory taken) of the processes that can cause the scope's
// reclaim, or, where the chain was traced, of what the victim lost
// (chain.go). It fills pf.Credits, FiresWith and OOMKilled and returns
// the credited episodes.
func (mc *modelCtx) creditJob(r *jobRun, all []*jobRun, pf *Proof) map[int]bool {
	credited := map[int]bool{}
	with := map[string]bool{}
	for i := range mc.res.Episodes {
		c, names, ok := mc.creditEpisode(r, all, i)
		if !ok {
			continue
		}
		for _, nm := range names {
			with[nm] = true
		}
		credited[i] = true
		pf.Credits = append(pf.Credits, c)
	}
	for nm := range with {
		pf.FiresWith = append(pf.FiresWith, nm)
	}
	pf.OOMKilled = mc.oomKilled(r, credited)
	slices.Sort(pf.FiresWith)

	return credited
}

// creditEpisode is the job's credit for episode i, if it has one: its
// I/O share (alone or with its wake-up group, the names returned), its
// memory share, or, where the chain judged the episode, its cost share.
// A traced episode whose chain refutes its I/O is counted in
// r.chainRefuted.
func (mc *modelCtx) creditEpisode(r *jobRun, all []*jobRun, i int) (EpisodeCredit, []string, bool) {
	e := &mc.res.Episodes[i]
	var share, gs, ms float64
	var names []string
	if e.scopeBytes() > 0 {
		share = float64(r.bytes[i]) / float64(e.scopeBytes())
		gs, names = mc.groupShare(r, all, i)
	}
	if e.scopeMem() > 0 {
		ms = float64(r.mem[i]) / float64(e.scopeMem())
	}
	ioOK := r.bytes[i] >= mc.o.Model.CreditFloor && (share >= mc.o.Model.MinShare || gs >= mc.o.Model.MinShare)
	memOK := r.mem[i] >= mc.o.Model.CreditFloor && ms >= mc.o.Model.MinShare
	cc, judged, chainOK := mc.chainJudge(i, func(p *proc) bool { return r.own.tie(p) != nil })
	var gcs float64
	if judged && len(names) > 0 {
		// A timer of a coalesced wake-up is credited with its group,
		// as by I/O: the group's cost share, its own cost at least
		// the floor (an O_DIRECT reader firing with a buffered one
		// costs nothing of its own).
		gcs = mc.groupCost(cc, all, names, i)
		chainOK = chainOK || cc.CostBytes >= mc.o.Model.CreditFloor && gcs >= mc.o.Model.MinShare
	}
	if judged && ioOK && !chainOK {
		r.chainRefuted++
		r.chainAdded += cc.AddedBytes
		r.chainCost += cc.CostBytes
	}
	if judged {
		// The chain decides: its I/O counts only for what it cost the
		// victim (chain.go); its co-firing group no longer carries it.
		if !chainOK && !memOK {
			return EpisodeCredit{}, nil, false
		}
		if !ioOK || !chainOK {
			names = nil
		}
		share, gs, ioOK = cc.CostShare, gcs, chainOK
	}
	if !ioOK && !memOK {
		return EpisodeCredit{}, nil, false
	}
	if !ioOK {
		names = nil
	}
	c := EpisodeCredit{Episode: i, Start: e.Start, Bytes: r.bytes[i], AllBytes: e.scopeBytes(), OutsideBytes: e.OutsideBytes, Share: round3(share), UnknownBytes: r.unk[i],
		MemBytes: r.mem[i], MemAll: e.scopeMem(), MemOutside: e.OutsideMem, MemShare: round3(ms)}
	c.Chain, c.ChainJudged = cc, judged
	if names != nil {
		c.GroupShare = round3(gs)
	}
	if !r.first[i].IsZero() {
		l := math.Round(onsetOf(e).Sub(r.first[i]).Seconds()*10) / 10
		c.LeadS = &l
	}
	return c, names, true
}

// firingEval is what weighFirings found of a job's firings.
type firingEval struct {
	period, lag      time.Duration
	ws               []window
	use              bool // its firings were weighed
	counted, matched int  // its firings within the recording, and those an episode followed
	paper            int  // its firings near episodes, credited or not
	fireEps          map[int]bool
}

// weighFirings is the firings stage: which of its firings within the
// recording an episode it is credited with followed (any episode without
// per-process data), and the chance of as many at random (PFiring).
func (mc *modelCtx) weighFirings(r *jobRun, fs []timers.Firing, closest []time.Duration, projected bool, credited map[int]bool, pf *Proof) *firingEval {
	res, o, job := mc.res, mc.o, r.job
	period, lag, ws := jobWindows(res, job, fs, o)
	use, why := firingsUsable(job, projected, fs)
	pf.FiringsUsed, pf.FiringsUnused = use, why
	fe := &firingEval{period: period, lag: lag, ws: ws, use: use, fireEps: map[int]bool{}}
	if !use {
		return fe
	}
	windowSum, reach := mc.matchFirings(fe, closest, credited, pf)
	if fe.counted == 0 {
		pf.FiringsUsed, pf.FiringsUnused = false, UnusedNoneInRecording
		return fe
	}
	// With episodes at random times a window of width w holds one
	// of n episode starts with probability q = 1 − (1 − w/span)^n;
	// w is the part of the window the matched episodes used.
	span := res.End.Sub(res.Start)
	w := float64(windowSum) / float64(fe.counted)
	if fe.matched > 0 {
		w = math.Min(w, float64(reach+res.Interval))
	}
	q := 1 - math.Pow(1-math.Min(1, w/float64(span)), float64(len(res.Episodes)))
	pf.PFiring = BinomialTail(fe.counted, fe.matched, q)
	return fe
}

// matchFirings matches each of fe's firing windows with the episodes it
// is credited with (any episode without per-process data) that start in
// it, closer to it than to any other job's firing (closest, with one
// interval of slack): it counts fe's firings within the recording,
// matched and near an episode, records them in pf, and returns the
// windows' summed width and how far into a window a matched episode
// started at most.
func (mc *modelCtx) matchFirings(fe *firingEval, closest []time.Duration, credited map[int]bool, pf *Proof) (windowSum, reach time.Duration) {
	res, slack := mc.res, mc.res.Interval
	for _, w := range fe.ws {
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
				fe.fireEps[i], hit = true, true
				if w.inRec {
					reach = max(reach, s.Sub(w.from))
				}
			}
		}
		if onPaper {
			fe.paper++
		}
		if !w.inRec {
			continue
		}
		// A firing the recording ended within the window of, that no
		// episode followed, is no evidence either way: its episode may
		// have begun after the end. It counts neither matched nor missed.
		if !hit && w.to.After(res.End) {
			pf.FiringsCutOff = append(pf.FiringsCutOff, w.earliest)
			continue
		}
		fe.counted++
		if hit {
			fe.matched++
			pf.FiringsMatched = append(pf.FiringsMatched, w.earliest)
		} else {
			pf.FiringsMissed = append(pf.FiringsMissed, w.earliest)
		}
		windowSum += w.to.Sub(w.from)
	}
	return windowSum, reach
}

// weighNull is the null-model stage: how often its processes were as
// busy outside episodes (PNull), its runs, its median share and whether
// it started late, and the cap a ride-along gets.
func (mc *modelCtx) weighNull(r *jobRun, pf *Proof) {
	res := mc.res
	n := len(res.Episodes)
	// Null model: its activity outside episodes, at no less than half
	// the rate it had in its credited episodes.
	act := mc.presence(r.procs, pf.Credits)
	m := mc.outside
	pf.Presence = round4(float64(len(act)+1) / float64(m+2))
	pf.PresentIntervals, pf.OutsideIntervals = len(act), m
	pf.EpisodeIntervals = round4(mc.epLen)
	pf.EpisodeChance = round4(1 - math.Pow(1-pf.Presence, mc.epLen))
	k := len(pf.Credits)
	pf.PNull = BinomialTail(n, k, pf.EpisodeChance)
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
	if k > 0 && pf.Share < mc.o.Model.MinShare {
		pf.Cap = math.Min(pf.Cap, mc.o.Model.RideAlongCap)
	}
}

// nameJob is the naming stage: whether the job is named, and what the
// rule weighed when it is not (for notNamed).
func (mc *modelCtx) nameJob(r *jobRun, pf *Proof, fe *firingEval) (bool, unnamedEval) {
	res, job := mc.res, r.job
	k := len(pf.Credits)
	counted, matched, fireEps := fe.counted, fe.matched, fe.fireEps
	// Naming. barShare and barLate are what the rule for credited jobs
	// weighed (RanUnnamed.Share, Late): the share, or the median share,
	// and whether it started after the stall.
	named := false
	var barShare float64
	barLate := false
	switch {
	case !mc.recorded:
		// No per-process data: the schedule alone, with that limit.
		fireOK := pf.FiringsUsed && job.Active && counted >= 2 && matched >= 2 &&
			float64(matched) >= mc.o.Model.FiringsMatched*float64(counted) && len(fireEps) >= 2 && pf.PFiring < mc.o.Model.MaxChance
		if fireOK {
			named = true
			pf.Cap = mc.o.Model.BlindCap
		}
	case k == 1:
		// One episode, by its share of it — unless most of its runs
		// raised none (pf.Runs, weighNull): a job that ran eight times
		// and met one episode did not cause it by running (a neighbour
		// fired 5 s after the job, whose run fell into an episode off
		// the job's schedule: CI R23, newcomer-nolimit).
		c := pf.Credits[0]
		late := c.LeadS != nil && *c.LeadS < -res.Interval.Seconds()
		barShare, barLate = math.Max(c.Share, c.GroupShare), late
		if barShare >= mc.o.Model.SoloShare && !late && 2*k >= pf.Runs {
			named = true
			pf.Cap = mc.o.Model.SoloCap
		}
	case k >= 2:
		// Chance ruled out; or, in a recording too short for that, the
		// bar of a single credit met every time: it did most of the I/O
		// (or took most of the memory) and started no later than the
		// stall. Its confidence then says how weak the chance test was.
		// A timer of a coalesced wake-up is named with its group: the
		// wake-up's share counts for the bar (its own share still sets
		// its confidence, capped at Model.RideAlongCap).
		// "Started no later than the stall" is judged by the median
		// lead, as the evidence reports it: late in one of two credits
		// is late (pf.Late, for the confidence, needs every one).
		var gshares, leads []float64
		for _, c := range pf.Credits {
			gshares = append(gshares, math.Max(math.Max(c.Share, c.MemShare), c.GroupShare))
			if c.LeadS != nil {
				leads = append(leads, *c.LeadS)
			}
		}
		lateMedian := len(leads) > 0 && median(leads) < -res.Interval.Seconds()
		barShare, barLate = median(gshares), lateMedian
		named = math.Min(pf.PNull, pf.PFiring) < mc.o.Model.MaxChance || (barShare >= mc.o.Model.SoloShare && !lateMedian)
	}
	return named, unnamedEval{paper: fe.paper, use: fe.use, ws: fe.ws, counted: fe.counted, matched: fe.matched, share: barShare, late: barLate}
}

// explainJob is the explain stage: the confidence's terms, the episodes
// it explains and its processes summed by program.
func (mc *modelCtx) explainJob(r *jobRun, pf *Proof, fe *firingEval, credited map[int]bool, projected bool) *Culprit {
	job, n, k := r.job, len(mc.res.Episodes), len(pf.Credits)
	counted, matched, fireEps, period, lag := fe.counted, fe.matched, fe.fireEps, fe.period, fe.lag
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

	var total uint64
	c.Processes, total = jobProcesses(r, c.Episodes)
	if k > 0 {
		c.BytesPerEpisode = total / uint64(k)
	}
	c.Confidence = pf.confidence(mc.o.Model.LateFactor)
	c.Lag, c.Projected = lag, projected
	return c
}

// jobProcesses are the job's processes summed by program over its
// explained episodes, most I/O first, and their total I/O there.
func jobProcesses(r *jobRun, episodes []int) ([]ProcActivity, uint64) {
	byProg := map[string]*ProcActivity{}
	var total uint64
	for _, i := range episodes {
		for _, pa := range r.procIn[i] {
			key := pa.Program
			a := byProg[key]
			if a == nil {
				a = &ProcActivity{Comm: pa.Comm, Program: pa.Program, Unit: pa.Unit, Cmdline: pa.Cmdline, StartedBy: pa.StartedBy}
				byProg[key] = a
			}
			a.ReadBytes += pa.ReadBytes
			a.WriteBytes += pa.WriteBytes
			a.ProcIDs = addPart(a.ProcIDs, &pa)
			total += pa.Bytes()
		}
	}
	var out []ProcActivity
	for _, a := range byProg {
		a.PIDs = sortProcs(a.ProcIDs)
		out = append(out, *a)
	}
	slices.SortFunc(out, func(a, b ProcActivity) int {
		if x := cmp.Compare(b.Bytes(), a.Bytes()); x != 0 {
			return x
		}
		return cmp.Compare(a.Program, b.Program)
	})
	return out, total
}

// addPart adds pa's process to ids once (addProc), or for a row of
// reaped children (no PID of their own) none, as their parent is the
// job's own process and is listed by its own row.
func addPart(ids []ProcID, pa *procPart) []ProcID {
	if pa.Reaped || pa.PID <= 0 {
		return ids
	}
	return addProc(ids, ProcID{PID: pa.PID, StartTicks: pa.start})
}

// addProc adds id to ids once, by PID and start time. A sighting without
// a start time is the process of its PID already listed (and gives its
// start time to one listed without), as the recording's process table
// matches them.
func addProc(ids []ProcID, id ProcID) []ProcID {
	for k := range ids {
		if ids[k].Is(id.PID, id.StartTicks) {
			ids[k].StartTicks = max(ids[k].StartTicks, id.StartTicks)
			return ids
		}
	}
	return append(ids, id)
}

// sortProcs sorts ids by PID, then start time, and returns their PIDs,
// each once ([ProcActivity.PIDs]).
func sortProcs(ids []ProcID) []int {
	slices.SortFunc(ids, func(a, b ProcID) int {
		return cmp.Or(cmp.Compare(a.PID, b.PID), cmp.Compare(a.StartTicks, b.StartTicks))
	})
	var pids []int
	for _, id := range ids {
		if n := len(pids); n == 0 || pids[n-1] != id.PID {
			pids = append(pids, id.PID)
		}
	}
	return pids
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }
func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// patternMem is the RSS growth in episode i of the processes of the
// pattern (runOf's key) inside the scope.
func (mc *modelCtx) patternMem(key string, i int) uint64 {
	e := &mc.res.Episodes[i]
	var m uint64
	for _, pa := range mc.sr.parts[e.Start] {
		if pa.memGrowth == 0 || pa.OutsideScope || pa.Reaped {
			continue
		}
		if pr := mc.pt.lookup(pa.procPID(), pa.start, e.End); pr != nil && mc.runOf(pr).key == key {
			m += pa.memGrowth
		}
	}
	return m
}

// run is the run a process without a job belongs to (runOf): key pools
// runs of one program and one lineage into one recurring pattern.
type run struct {
	key     string
	program string
	// root is the oldest process started for the run: p, or its
	// ancestors up to the last one that is not persistent (the fresh
	// s5nightly.sh that runs cat). name is the process that names it:
	// root, or below a shell running a command line (sh -c) the first
	// process that runs a program.
	root, name *proc
}

// runOf is p's run. A run's processes are p and its ancestors that are
// not persistent (started for one run only); the run is named by the
// program of its root (a script's dd and cat are the script's), and
// pooled with the runs of the same program under the same anchor: the
// nearest persistent ancestor (the loop, the scheduler), by its program
// and command line, or by its PID when its identity was not recorded.
// So the loop's cat and a shell harness's cats are two patterns, and
// seven fresh s5nightly.sh runs under one loop are one.
func (mc *modelCtx) runOf(p *proc) *run {
	if r, ok := mc.runs[p]; ok {
		return r
	}
	chain := append([]*proc{p}, mc.pt.ancestors(p)...)
	k := 0
	if !mc.persistent(p) {
		for k+1 < len(chain) && !mc.persistent(chain[k+1]) {
			k++
		}
	}
	j := k
	for j > 0 && isInterpreter(programOf(chain[j].comm, chain[j].cmdline)) {
		j--
	}
	r := &run{root: chain[k], name: chain[j], program: programOf(chain[j].comm, chain[j].cmdline)}
	anchor := "init"
	switch {
	case k+1 < len(chain) && chain[k+1].comm != "":
		a := chain[k+1]
		anchor = programOf(a.comm, a.cmdline) + "\x00" + a.cmdline
	case k+1 < len(chain):
		anchor = "pid " + strconv.Itoa(chain[k+1].pid)
	case chain[k].ppid > 1:
		anchor = "pid " + strconv.Itoa(chain[k].ppid)
	}
	r.key = r.program + "\x00" + anchor
	mc.runs[p] = r
	return r
}

// persistent reports whether p outlives one run: alive at the start of
// two or more episodes (from its exec, else its first sighting, to its
// exit, else the end), like a loop or a scheduler, as opposed to a
// process started for one run.
func (mc *modelCtx) persistent(p *proc) bool {
	if v, ok := mc.persist[p]; ok {
		return v
	}
	from := p.execAt
	if from.IsZero() {
		from = p.first
	}
	n := 0
	for i := range mc.res.Episodes {
		s := mc.res.Episodes[i].Start
		if from.After(s) || p.exited && !p.exitAt.IsZero() && p.exitAt.Before(s) {
			continue
		}
		n++
	}
	mc.persist[p] = n >= 2
	return n >= 2
}

// startedBy is p's recorded ancestor chain, parent first ("s5job.sh
// 2100"); a parent whose identity was not recorded is "? PID" (its PID
// from p's exec event or samples).
func (mc *modelCtx) startedBy(p *proc) []string {
	var out []string
	for _, a := range mc.pt.ancestors(p) {
		out = append(out, a.label())
	}
	if len(out) == 0 && p.ppid > 1 && p.ppid != p.pid {
		out = append(out, "? "+strconv.Itoa(p.ppid))
	}
	return out
}

// patternProcs are the recorded processes of the pattern key.
func (mc *modelCtx) patternProcs(key string) map[*proc]bool {
	if out, ok := mc.patterns[key]; ok {
		return out
	}
	out := map[*proc]bool{}
	for _, p := range mc.pt.all {
		if mc.runOf(p).key == key {
			out[p] = true
		}
	}
	if mc.patterns == nil {
		mc.patterns = map[string]map[*proc]bool{}
	}
	mc.patterns[key] = out
	return out
}

// runStarts are the recorded exec times of the pattern key's runs (their
// roots), in time order.
func (mc *modelCtx) runStarts(key string) []time.Time {
	seen := map[*proc]bool{}
	var out []time.Time
	for _, p := range mc.pt.all {
		r := mc.runOf(p)
		if r.key != key || seen[r.root] || r.root.execAt.IsZero() {
			continue
		}
		seen[r.root] = true
		out = append(out, r.root.execAt)
	}
	slices.SortFunc(out, time.Time.Compare)
	return out
}

// runPeriod is the period of the pattern key's recorded starts, nil when
// they show none.
func (mc *modelCtx) runPeriod(key string) *Period {
	st := mc.runStarts(key)
	if len(st) < periodMinHits {
		return nil
	}
	return estimatePeriod(st, mc.res.Start, mc.res.End, 4*mc.res.Interval)
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
			if mc.episodeIO(p, a.k) {
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
	return inB/float64(inN) >= mc.o.Model.BusyFactor*outB/float64(outN)
}

// missing says what the recording lacked to name a recurrence's cause;
// chance: a recorded program did the I/O of two or more of its episodes,
// too few to rule out chance; busy: one did, but as busy outside them.
// MissingIO only when no recorded process did.
func (mc *modelCtx) missing(chance, busy bool) []Missing {
	if !mc.recorded {
		return []Missing{MissingProcesses}
	}
	var out []Missing
	if chance {
		out = append(out, MissingEpisodes)
	}
	if busy {
		out = append(out, MissingBusy)
	}
	if mc.ioDenied() {
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

// episodeIO reports whether p's I/O in interval k (proc.active) is
// counted in an episode's: k is one of its intervals, or p started in
// the interval just before the episode and exited within it — the
// episode then counts p's exit life totals, its I/O from its exec on
// (analyze.go's episode: a job starts, then its I/O raises the stall).
// specific and presence weigh the rest as outside, so no byte is both.
func (mc *modelCtx) episodeIO(p *proc, k int) bool {
	if mc.inEp[k] {
		return true
	}
	if k != p.execK || k+1 >= len(mc.inEp) || !mc.inEp[k+1] || p.exitK < k {
		return false
	}
	for x := k + 1; x <= p.exitK; x++ {
		if x >= len(mc.inEp) || !mc.inEp[x] {
			return false
		}
	}
	return true
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
		thr = median(rates) * mc.o.Model.PresentRate
	}
	per := map[int]uint64{}
	for _, p := range procs {
		for _, a := range p.active {
			if a.k < len(mc.inEp) && !mc.episodeIO(p, a.k) {
				per[a.k] += a.b
			}
		}
	}
	act := map[int]bool{}
	for k, b := range per {
		if b > 0 && float64(b) >= thr*mc.sr.intervals()[k].Dt.Seconds() {
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

// oomKilled are r's processes ("comm pid") OOM-killed in scope within one
// of the credited episodes (to the end of the interval that holds the
// kill), in time order.
func (mc *modelCtx) oomKilled(r *jobRun, credited map[int]bool) []string {
	var out []string
	for _, k := range mc.sr.ooms {
		in := false
		for i := range credited {
			e := &mc.res.Episodes[i]
			if !k.Time.Before(e.Start) && !k.Time.After(e.End.Add(mc.res.Interval)) {
				in = true
			}
		}
		if !in {
			continue
		}
		for _, v := range k.Victims {
			if v.OutsideScope {
				continue
			}
			for _, p := range r.procs {
				if p.pid == v.PID {
					out = append(out, v.Comm+" "+strconv.Itoa(v.PID))
					break
				}
			}
		}
	}
	return out
}

// ioDenied reports whether /proc/PID/io was unreadable for at least half
// the processes a scan listed (Sample.Scan.Denied).
func (mc *modelCtx) ioDenied() bool {
	return mc.sr.denied > 0 && 2*mc.sr.denied >= mc.sr.listed
}

// startedAnew reports whether a pattern that had a new process each time
// is started by something outside it rather than by a schedule inside its
// own program. One long-lived process doing this on a period has a
// schedule inside, and so has a service that forks a worker each time
// (postgres's autovacuum: the parent runs the same program). A new process
// each time outside any unit is started by something else: a script, a
// loop; a scope (a login session, a transient group) is no service, a
// shell loop in it starts its own processes. In a service, a recorded
// parent that runs another program (a shell loop starting a script) is
// that something else too.
func startedAnew(rep ProcActivity) bool {
	if rep.Unit == "" || strings.HasSuffix(rep.Unit, ".scope") {
		return true
	}
	if len(rep.StartedBy) == 0 {
		return false
	}
	parent := rep.StartedBy[0]
	if i := strings.LastIndexByte(parent, ' '); i >= 0 {
		parent = parent[:i]
	}
	return parent != "?" && parent != rep.Program && parent != rep.Comm
}
