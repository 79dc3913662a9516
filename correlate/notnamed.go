package correlate

import (
	"math"

	"github.com/memdiag/memdiag/timers"
)

// NotNamedKind says why a job of the inventory is not named (NotRun.Kind,
// JSON not_run[].kind).
type NotNamedKind string

// Why a job is not named: what the recording shows it did.
const (
	// NotRunOutsideScope: it ran, but every recorded process of it ran
	// outside the --cgroup group analysed (NotRun.OutsideScope).
	NotRunOutsideScope NotNamedKind = "ran_outside_scope"
	// NotRunNoEpisodeIO: it ran, but its processes did no I/O and took
	// no memory in any episode (NotRun.Ran).
	NotRunNoEpisodeIO NotNamedKind = "ran_no_episode_io"
	// NotRunBelowCredit: it ran and did I/O in episodes, but never
	// enough for a credit (Model.CreditFloor and Model.MinShare).
	NotRunBelowCredit NotNamedKind = "ran_below_credit"
	// NotRunChainRefuted: its I/O met the correlation bar in episodes,
	// but the traced page-cache chain judged them and showed it cost the
	// victim too little (chain.go): correlation without cause.
	NotRunChainRefuted NotNamedKind = "ran_chain_refuted"
	// NotRunRodeAlong: it was credited with episodes only together with
	// the jobs of its wake-up (its own share under Model.MinShare), one
	// of which did more than twice its work (RanUnnamed.RodeWith): what
	// correlation has on it is that job's (splitUndecided).
	NotRunRodeAlong NotNamedKind = "rode_along"
	// NotRunNotProven: it was credited with episodes, but the naming
	// rule was not met (chance not ruled out, started after the stall,
	// one episode below Model.SoloShare).
	NotRunNotProven NotNamedKind = "ran_not_proven"
	// NotRunScheduled: no process of it was recorded, though its
	// firings fell near episodes: scheduled but did not run.
	NotRunScheduled NotNamedKind = "scheduled_not_run"
	// NotRunOtherCgroup: under a cgroup scope, no process of it was
	// recorded and its unit runs outside the group (timers.Job.Cgroup,
	// NotRun.Cgroup): it cannot cause the group's reclaim.
	NotRunOtherCgroup NotNamedKind = "other_cgroup"
	// NotRunCannot: no process of it was recorded and it cannot run
	// here (timers.Runs: not pulled in, a guard, systemd or cron not
	// running when the recording began).
	NotRunCannot NotNamedKind = "cannot_run"
	// NotRunDidNot: no process of it was recorded, and no firing of it
	// fell near an episode.
	NotRunDidNot NotNamedKind = "did_not_run"
	// NotRunUnknown: the recording has no per-process data, so whether
	// it ran is unknown, and its firings alone do not name it.
	NotRunUnknown NotNamedKind = "run_unknown"
)

// RanUnnamed is what a job that ran in the scope did in the episodes,
// though it is not named (NotRun.Ran).
type RanUnnamed struct {
	Processes int // its recorded processes
	Of        int // the recording's episodes
	// Episodes is how many episodes its processes did I/O in (in the
	// scope) or took memory in; MaxBytes the most I/O they did in one,
	// MaxShare the largest share of one episode's I/O they had.
	Episodes int
	MaxBytes uint64
	MaxShare float64
	// Credited is how many episodes it was credited with; P the chance
	// probability min(p_null, p_firing) of those credits; Share the
	// share the naming rule weighed (its median over the credits, or
	// the one credit's; its wake-up group's where larger); Late that it
	// started after the stall (the median lead below −1 interval).
	Credited int
	P        float64
	Share    float64
	Late     bool
	Lead     *float64 // median lead over the credits, seconds; nil when no start was recorded
	// ChainRefuted is how many episodes its I/O met the correlation bar
	// in but the traced chain showed it cost the victim too little;
	// ChainAdded its page-cache additions in the victim's domain and
	// ChainCost what they cost the victim there, bytes, summed over them.
	ChainRefuted int
	ChainAdded   uint64
	ChainCost    uint64
	// RodeWith (NotRunRodeAlong) is the job of its wake-up that stood
	// out; WorkRatio its own median work (I/O plus memory taken) over
	// that job's.
	RodeWith  string
	WorkRatio float64
}

// unnamedEval is what evalJob weighed for a job it did not name.
type unnamedEval struct {
	paper            int // its firings near episodes
	use, projected   bool
	ws               []window
	counted, matched int
	share            float64
	late             bool
}

// notNamed says why job r is not named: what the recording shows of it.
func (mc *modelCtx) notNamed(r *jobRun, pf *Proof, ev unnamedEval) NotRun {
	res, job := mc.res, r.job
	nr := NotRun{Name: job.Name, Job: job}
	if o := mc.ranOutside(r); o != nil {
		nr.Kind, nr.OutsideScope = NotRunOutsideScope, o
		return nr
	}
	if !pf.Ran && mc.scope == ScopeCgroup && job.Cgroup != "" && !inScope(&mc.sr.Header, job.Cgroup) {
		nr.Kind, nr.Cgroup, nr.Group = NotRunOtherCgroup, job.Cgroup, mc.sr.Header.Cgroup
		return nr
	}
	if !mc.recorded {
		if runs, _ := timers.Runs(job); !runs {
			nr.Kind = NotRunCannot
			return nr
		}
		nr.Kind, nr.Firings, nr.Matched = NotRunUnknown, ev.counted, ev.matched
		if !ev.use {
			nr.FiringsUnused = pf.FiringsUnused
		}
		return nr
	}
	if pf.Ran {
		nr.Kind, nr.Ran = mc.ranUnnamed(r, pf, ev)
		return nr
	}
	if runs, _ := timers.Runs(job); !runs {
		nr.Kind = NotRunCannot
		return nr
	}
	switch {
	case ev.paper > 0:
		nr.Kind, nr.FiringsNear = NotRunScheduled, ev.paper
	case !ev.use && ev.projected && paperHits(res, ev.ws) > 0:
		nr.Kind, nr.FiringsUnused = NotRunScheduled, pf.FiringsUnused
	default:
		nr.Kind = NotRunDidNot
	}
	return nr
}

// ranUnnamed is what a job that ran in the scope, and was not named,
// did in the episodes, and the rule it did not meet: naming (credited),
// the traced chain's, the credit's, or none (no I/O in any episode).
func (mc *modelCtx) ranUnnamed(r *jobRun, pf *Proof, ev unnamedEval) (NotNamedKind, *RanUnnamed) {
	res := mc.res
	u := &RanUnnamed{Processes: len(r.procs), Of: len(res.Episodes), Credited: len(pf.Credits)}
	for i := range res.Episodes {
		if r.bytes[i] == 0 && r.mem[i] == 0 {
			continue
		}
		u.Episodes++
		u.MaxBytes = max(u.MaxBytes, r.bytes[i])
		if all := res.Episodes[i].scopeBytes(); all > 0 {
			u.MaxShare = math.Max(u.MaxShare, math.Round(1e6*float64(r.bytes[i])/float64(all))/1e6)
		}
	}
	switch {
	case u.Credited > 0:
		u.P, u.Share, u.Late = round4(math.Min(pf.PNull, pf.PFiring)), round3(ev.share), ev.late
		var leads []float64
		for _, c := range pf.Credits {
			if c.LeadS != nil {
				leads = append(leads, *c.LeadS)
			}
		}
		if len(leads) > 0 {
			l := math.Round(median(leads)*10) / 10
			u.Lead = &l
		}
		return NotRunNotProven, u
	case r.chainRefuted > 0:
		u.ChainRefuted, u.ChainAdded, u.ChainCost = r.chainRefuted, r.chainAdded, r.chainCost
		return NotRunChainRefuted, u
	case u.Episodes > 0:
		return NotRunBelowCredit, u
	}
	return NotRunNoEpisodeIO, u
}

// CreditBar is what a credit needs under the default model
// (DefaultModel): its processes' I/O (or memory taken) in the episode at
// least floor bytes and share of everyone's.
func CreditBar() (floor uint64, share float64) {
	m := DefaultModel()
	return m.CreditFloor, m.MinShare
}

// NamingBar is what naming a credited job needs under the default model
// (DefaultModel): a chance probability below maxP, or (short recordings,
// one credit) a share of at least share, started no later than the
// stall.
func NamingBar() (maxP, share float64) {
	m := DefaultModel()
	return m.MaxChance, m.SoloShare
}
