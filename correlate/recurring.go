package correlate

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"time"
)

// recurringUnexplained reports a period whose episodes the named jobs do
// not explain, as the program that did their I/O or as unknown. Its
// stages are a job's (docs/analyze.md, "The culprit model"):
// gatherUnexplained (the episodes no named job explains),
// creditPatterns (each program pattern's credits, runOf ties its
// processes), weighPatterns (the null model, and whose runs recur), then
// explainPattern (the best pattern, named) or explainUnknown.
func (mc *modelCtx) recurringUnexplained(named []Culprit) *Culprit {
	u := mc.gatherUnexplained(named)
	if u == nil {
		return nil
	}
	progs := mc.creditPatterns(u)
	cands, chance, busy, self := mc.weighPatterns(u, progs)
	if len(self) > 0 {
		mc.res.VictimReads = &VictimReads{Program: self[0].program, Episodes: len(self[0].eps), Of: len(mc.res.Episodes)}
	}
	if u.execOnly && len(cands) == 0 {
		return nil
	}
	c := &Culprit{Kind: KindUnknown, Name: "unknown", EpisodesTotal: len(mc.res.Episodes),
		Episodes: u.un, EpisodesExplained: len(u.un)}
	if u.p != nil {
		c.Period = u.p.Period
	}
	covered := map[int]bool{}
	for _, a := range cands {
		for e := range a.eps {
			covered[e] = true
		}
	}
	// pool: the recurring episodes no job explains, and those credited
	// to a pattern by its own recurring starts.
	var pool []int
	for _, i := range u.scan {
		if u.onSched[i] || covered[i] {
			pool = append(pool, i)
		}
	}
	u.un = pool
	if len(cands) > 0 && 2*len(covered) >= len(u.un) {
		return mc.explainPattern(u, c, cands)
	}
	return mc.explainUnknown(u, c, chance, busy, self)
}

// unexplained is what gatherUnexplained found: the episodes a pattern
// may be credited with.
type unexplained struct {
	p *Period // the episodes' period, nil when they show none
	// execOnly: the episodes show no period (on a busy host runs merge
	// or miss), so only a program whose own starts recur (its exec
	// events) may be named, from all unexplained episodes.
	execOnly bool
	// un are the unexplained recurring episodes (the period's members no
	// named job explains; every unexplained episode when execOnly),
	// onSched the same as a set, scan the episodes whose I/O is weighed.
	un      []int
	onSched map[int]bool
	scan    []int
}

// gatherUnexplained is the candidates stage of recurringUnexplained: the
// episodes no named culprit explains, nil when too few of them recur
// (periodMinHits; half the period's members when it has one).
func (mc *modelCtx) gatherUnexplained(named []Culprit) *unexplained {
	res := mc.res
	u := &unexplained{p: res.Period, execOnly: res.Period == nil}
	explained := map[int]bool{}
	for _, c := range named {
		for _, e := range c.Episodes {
			explained[e] = true
		}
	}
	if u.execOnly {
		if !mc.recorded {
			return nil
		}
		for i := range res.Episodes {
			if !explained[i] {
				u.un = append(u.un, i)
			}
		}
	} else {
		for _, m := range u.p.Members {
			if !explained[m] {
				u.un = append(u.un, m)
			}
		}
		if 2*len(u.un) < len(u.p.Members) {
			return nil
		}
	}
	if len(u.un) < periodMinHits {
		return nil
	}
	// A program whose runs' starts recur (exec events) is credited with
	// every unexplained episode, on the episodes' schedule or not: runs
	// that merge or wander on a busy host are still its runs.
	u.onSched = map[int]bool{}
	for _, i := range u.un {
		u.onSched[i] = true
	}
	u.scan = u.un
	if mc.recorded && !u.execOnly {
		u.scan = nil
		for i := range res.Episodes {
			if !explained[i] {
				u.scan = append(u.scan, i)
			}
		}
	}
	return u
}

// recurPattern is a pattern credited with unexplained recurring
// episodes: runs of one program and one lineage (runOf), with their
// processes' share of each episode's I/O, as for jobs.
type recurPattern struct {
	key     string
	program string
	eps     map[int]bool
	shares  []float64
	// epBytes is its I/O per credited episode, epUnk the part of it
	// whose cgroup was not recorded, epIO its reads and writes,
	// epRuns the bytes of each of its runs there.
	epBytes map[int]uint64
	epUnk   map[int]uint64
	epIO    map[int]ProcActivity
	epRuns  map[int]map[*run]uint64
	// epProcs are the processes that did its I/O in each episode.
	epProcs map[int][]ProcID
	// rep is its representative (the run that did the most of the
	// credited bytes), roots the runs that did I/O in its credited
	// episodes, procs every recorded process of the pattern.
	rep   ProcActivity
	roots int
	procs map[*proc]bool
	// null is its null model (weighPatterns); starts the period of its
	// runs' recorded starts (runPeriod), nil when they show none.
	null   nullFit
	starts *Period
}

// creditPatterns is the credit stage of recurringUnexplained: per
// scanned episode, each pattern that did at least Model.CreditFloor and
// Model.MinShare of the in-scope I/O (and, traced, cost the victim some) is
// credited with it.
func (mc *modelCtx) creditPatterns(u *unexplained) map[string]*recurPattern {
	progs := map[string]*recurPattern{}
	for _, i := range u.scan {
		e := &mc.res.Episodes[i]
		per, unk, order := mc.patternIO(i, progs)
		for _, key := range order {
			x := per[key]
			if x.Bytes() < mc.o.Model.CreditFloor || e.scopeBytes() == 0 || float64(x.Bytes()) < mc.o.Model.MinShare*float64(e.scopeBytes()) {
				continue
			}
			if !mc.chainAllows(i, key) {
				continue // traced: it cost the victim nothing
			}
			a := progs[key]
			a.eps[i] = true
			a.epBytes[i] = x.Bytes()
			a.epUnk[i] = unk[key]
			a.epIO[i] = ProcActivity{ReadBytes: x.ReadBytes, WriteBytes: x.WriteBytes}
		}
	}
	return progs
}

// patternIO sums episode i's in-scope I/O by pattern (runOf's key; a
// process not in the table by program): the reads and writes, the part
// whose cgroup was not recorded, and the patterns in order of first I/O.
// It adds the patterns to progs, with their processes and runs there.
func (mc *modelCtx) patternIO(i int, progs map[string]*recurPattern) (map[string]*ProcActivity, map[string]uint64, []string) {
	e := &mc.res.Episodes[i]
	per := map[string]*ProcActivity{}
	unk := map[string]uint64{} // of per's bytes, by processes whose cgroup was not recorded
	var order []string
	for _, pa := range mc.sr.parts[e.Start] {
		// Only what did I/O: a zero-byte process that merely started
		// in the episode is no evidence of anything.
		if pa.Program == "" || pa.Bytes() == 0 || pa.OutsideScope {
			continue
		}
		pr := mc.pt.lookup(pa.procPID(), pa.start, e.End)
		var ru *run
		key := pa.Program + "\x00?"
		if pr != nil {
			ru = mc.runOf(pr)
			key = ru.key
		}
		x := per[key]
		if x == nil {
			x = &ProcActivity{}
			per[key] = x
			order = append(order, key)
		}
		x.ReadBytes += pa.ReadBytes
		x.WriteBytes += pa.WriteBytes
		if pa.CgroupUnknown {
			unk[key] += pa.Bytes()
		}
		a := progs[key]
		if a == nil {
			a = &recurPattern{key: key, program: pa.Program, eps: map[int]bool{}, epBytes: map[int]uint64{}, epUnk: map[int]uint64{}, epIO: map[int]ProcActivity{}, epRuns: map[int]map[*run]uint64{}, epProcs: map[int][]ProcID{}}
			if ru != nil {
				a.program = ru.program
			}
			progs[key] = a
		}
		a.epProcs[i] = addPart(a.epProcs[i], &pa)
		if ru != nil {
			if a.epRuns[i] == nil {
				a.epRuns[i] = map[*run]uint64{}
			}
			a.epRuns[i][ru] += pa.Bytes()
		}
	}
	return per, unk, order
}

// sumPattern totals a's credited episodes among scan: its I/O, shares,
// runs and its representative, the run that did the most of the
// credited bytes.
func (mc *modelCtx) sumPattern(a *recurPattern, scan []int) {
	a.rep.ReadBytes, a.rep.WriteBytes, a.shares, a.rep.PIDs, a.rep.ProcIDs = 0, 0, a.shares[:0], nil, nil
	byRun := map[*run]uint64{}
	for _, i := range scan {
		if !a.eps[i] {
			continue
		}
		e := &mc.res.Episodes[i]
		x := a.epIO[i]
		a.rep.ReadBytes += x.ReadBytes
		a.rep.WriteBytes += x.WriteBytes
		for _, id := range a.epProcs[i] {
			a.rep.ProcIDs = addProc(a.rep.ProcIDs, id)
		}
		a.shares = append(a.shares, float64(x.Bytes())/float64(e.scopeBytes()))
		for ru, b := range a.epRuns[i] {
			byRun[ru] += b
		}
	}
	a.rep.PIDs = sortProcs(a.rep.ProcIDs)
	a.roots = len(runRoots(byRun))
	mc.represent(&a.rep, a.program, bestRun(byRun))
}

// weighPatterns is the null-model stage of recurringUnexplained: of the
// patterns credited with two or more episodes, the candidates (sorted,
// most episodes first) and those not named: chance not ruled out
// (p_null at least Model.MaxChance and a median share below Model.SoloShare), as
// busy outside the episodes as in them (busy: specific fails), or the
// victim reading (self: victimReads).
func (mc *modelCtx) weighPatterns(u *unexplained, progs map[string]*recurPattern) (cands, chance, busy, self []*recurPattern) {
	for _, a := range progs {
		if len(a.eps) < 2 {
			// Below, episodes are only removed: it cannot be weighed.
			// (Its period search was a third of the minute's analysis
			// on a busy build host.)
			continue
		}
		ep := mc.runPeriod(a.key)
		if ep == nil {
			// Without its own recurring starts, only the episodes on
			// their schedule count.
			for i := range a.eps {
				if !u.onSched[i] {
					delete(a.eps, i)
				}
			}
		}
		mc.sumPattern(a, u.scan)
		if len(a.eps) < 2 {
			continue
		}
		a.procs = mc.patternProcs(a.key)
		if mc.victimReads(a) {
			self = append(self, a)
			continue
		}
		if !mc.specific(a.procs) {
			busy = append(busy, a)
			continue
		}
		if u.execOnly && (ep == nil || len(a.eps) < periodMinHits) {
			continue
		}
		a.starts = ep
		a.null = mc.patternNull(a.procs, slices.Collect(maps.Keys(a.eps)), a.epBytes)
		if a.null.pn >= mc.o.Model.MaxChance && median(a.shares) < mc.o.Model.SoloShare {
			// Chance not ruled out, and not the dominant I/O either.
			chance = append(chance, a)
			continue
		}
		cands = append(cands, a)
	}
	slices.SortFunc(cands, func(a, b *recurPattern) int {
		if c := cmp.Compare(len(b.eps), len(a.eps)); c != 0 {
			return c
		}
		if c := cmp.Compare(b.rep.Bytes(), a.rep.Bytes()); c != 0 {
			return c
		}
		return cmp.Compare(a.key, b.key)
	})
	// The victim's patterns in a fixed order (progs is a map): the first
	// is Result.VictimReads'.
	slices.SortFunc(self, byEpisodes)
	return cands, chance, busy, self
}

// byEpisodes orders patterns by their credited episodes, most first,
// then by key.
func byEpisodes(a, b *recurPattern) int {
	if c := cmp.Compare(len(b.eps), len(a.eps)); c != 0 {
		return c
	}
	return cmp.Compare(a.key, b.key)
}

// victimReads says whether pattern a is the victim reading: every one
// of its processes is the recorded victim process or one it started,
// it read more than it wrote in its credited episodes, and no chain was
// traced. A victim whose pages reclaim took reads them back in its own
// episodes (refaults): from correlation alone those reads are as
// likely the stall's effect as its cause, so they name nobody. With the
// chain traced, creditPatterns already kept only what cost the victim.
func (mc *modelCtx) victimReads(a *recurPattern) bool {
	v := mc.res.Victim
	if v == nil || v.PID <= 0 || mc.sr.chainTraced || len(a.procs) == 0 || a.rep.ReadBytes < a.rep.WriteBytes {
		return false
	}
	for p := range a.procs {
		if !mc.ofVictim(p, v.PID) {
			return false
		}
	}
	return true
}

// ofVictim says whether p is the victim process pid or one it started
// (a recorded ancestor is pid).
func (mc *modelCtx) ofVictim(p *proc, pid int) bool {
	if p.pid == pid {
		return true
	}
	return slices.ContainsFunc(mc.pt.ancestors(p), func(a *proc) bool { return a.pid == pid })
}

// explainPattern is the explain stage of recurringUnexplained when a
// pattern is named: the best candidate becomes c, a process culprit
// with the episodes of u.un it is credited with, its period, proof and
// the other candidates as Programs.
func (mc *modelCtx) explainPattern(u *unexplained, c *Culprit, cands []*recurPattern) *Culprit {
	best := cands[0]
	c.Kind, c.Name = KindProcess, best.program
	// One count everywhere: the episodes it is credited with are the
	// episodes it explains, its credits and its runs.
	c.Episodes = c.Episodes[:0]
	for _, e := range u.un {
		if best.eps[e] {
			c.Episodes = append(c.Episodes, e)
		}
	}
	c.EpisodesExplained = len(c.Episodes)
	c.Processes = []ProcActivity{best.rep}
	c.BytesPerEpisode = best.rep.Bytes() / uint64(max(1, len(best.eps)))
	score := mc.patternPeriod(u.p, c, best.starts)
	pf := mc.patternProof(best.null)
	pf.Repeat = round3(score * float64(len(best.eps)) / float64(len(u.un)))
	if best.starts != nil {
		pf.Starts = mc.runStarts(best.key)
		pf.StartsPeriod = startsFit(best.starts)
	}
	// Its credits carry what a job's do, so its share recomputes the
	// same way: the larger of its I/O share and its memory share.
	var own []float64
	procs := mc.patternProcs(best.key)
	for _, i := range c.Episodes {
		cr, share := mc.patternCredit(best.key, i, best.epBytes[i], best.epUnk[i])
		cr.Chain, cr.ChainJudged, _ = mc.chainJudge(i, func(p *proc) bool { return procs[p] })
		own = append(own, share)
		pf.Credits = append(pf.Credits, cr)
	}
	pf.Share = round3(median(own))
	pf.Runs = len(best.eps)
	c.Proof = pf
	c.NewEachTime = best.roots >= len(best.eps) && startedAnew(best.rep)
	c.Runs = best.roots
	for _, a := range cands {
		c.Programs = append(c.Programs, ProgramCredit{Program: a.program, Share: median(a.shares), Episodes: len(a.eps), Of: len(u.un)})
	}
	c.Confidence = pf.confidence(mc.o.Model.LateFactor)
	return c
}

// patternPeriod sets c.Period for a named pattern and returns the score
// of the schedule it is on: that of its own starts (starts, exec events:
// exact) when they show one at least as well as the episodes' period p,
// else p's, with the period of its own episodes' starts when they show
// one (not that of every episode, other tenants' included, issue 30.8).
func (mc *modelCtx) patternPeriod(p *Period, c *Culprit, starts *Period) float64 {
	res := mc.res
	switch {
	case starts != nil && (p == nil || starts.Score >= p.Score):
		c.Period = starts.Period
		return starts.Score
	case p != nil:
		var at []time.Time
		for _, e := range c.Episodes {
			at = append(at, res.Episodes[e].Start)
		}
		if own := estimatePeriod(at, res.Start, res.End, 4*res.Interval); own != nil {
			c.Period = own.Period
		}
		return p.Score
	}
	return 0
}

// explainUnknown is the explain stage of recurringUnexplained when no
// pattern is named: a recurrence of kind unknown with what did its I/O
// and why it is not named, or nil when it is too short to call a cause
// (Model.UnknownMinHits).
func (mc *modelCtx) explainUnknown(u *unexplained, c *Culprit, chance, busy, self []*recurPattern) *Culprit {
	p := u.p
	if p == nil || p.Matched < mc.o.Model.UnknownMinHits && !mc.ioDenied() {
		// A handful of episodes fits some lattice by chance: without a
		// process to name, too few to call a recurrence a cause. Unless
		// most processes' I/O was unreadable: then "no process matches"
		// would be said of data that is not there, so the recurrence is
		// reported as one the recording cannot attribute.
		return nil
	}
	c.Missing = mc.missing(len(chance) > 0, len(busy) > 0)
	if i := slices.Index(c.Missing, MissingIO); i >= 0 && slices.ContainsFunc(u.un, func(e int) bool { return mc.res.Episodes[e].OutsideBytes > 0 }) {
		c.Missing[i] = MissingOutsideIO
	}
	if len(self) > 0 {
		c.Missing = append([]Missing{MissingVictimSelf}, slices.DeleteFunc(c.Missing, func(m Missing) bool { return m == MissingIO || m == MissingOutsideIO })...)
	}
	// What did the recurring episodes' I/O, and why it is not named.
	for _, x := range []struct {
		as  []*recurPattern
		why Unnamed
	}{{self, UnnamedVictim}, {busy, UnnamedBusy}, {chance, unnamedChance}} {
		slices.SortFunc(x.as, byEpisodes)
		for _, a := range x.as {
			c.Programs = append(c.Programs, ProgramCredit{Program: a.program, Share: median(a.shares), Episodes: len(a.eps), Of: len(u.un), Unnamed: x.why})
		}
	}
	c.Confidence = math.Round(p.Score*mc.o.Model.UnknownFactor*100) / 100
	return c
}

// nullFit is a pattern's null model (patternNull): q the share of the
// intervals outside episodes in which it was as busy, (a+1)/(m+2); qe
// the chance a random episode meets its activity, 1 − (1 − q)^epLen;
// pn the binomial tail of its credited episodes at qe.
type nullFit struct {
	pn, q, qe        float64
	present, outside int // a and m
}

// patternNull is the null-model stage for a process pattern: procs'
// activity outside episodes at no less than half their median rate in
// the credited episodes eps (bytes their I/O there), as weighNull does
// for a job.
func (mc *modelCtx) patternNull(procs map[*proc]bool, eps []int, bytes map[int]uint64) nullFit {
	var ps []*proc
	for pr := range procs {
		ps = append(ps, pr)
	}
	var cr []EpisodeCredit
	for _, i := range eps {
		cr = append(cr, EpisodeCredit{Episode: i, Bytes: bytes[i]})
	}
	act := mc.presence(ps, cr)
	q := float64(len(act)+1) / float64(mc.outside+2)
	qe := 1 - math.Pow(1-q, mc.epLen)
	return nullFit{pn: BinomialTail(len(mc.res.Episodes), len(eps), qe), q: q, qe: qe, present: len(act), outside: mc.outside}
}

// patternProof starts a process pattern's proof from its null model: no
// job, so no ties and no firings weighed.
func (mc *modelCtx) patternProof(nf nullFit) *Proof {
	return &Proof{ProcessesRecorded: true, Ran: true, ShareScope: mc.scope, Ties: []Tie{}, FiringsMatched: []time.Time{}, FiringsMissed: []time.Time{},
		PFiring: 1, FiringsUnused: UnusedNoJob, Cap: 1,
		Presence: round4(nf.q), PresentIntervals: nf.present, OutsideIntervals: nf.outside, EpisodeIntervals: round4(mc.epLen), EpisodeChance: round4(nf.qe), PNull: nf.pn,
		P: nf.pn, Strength: round4(strength(nf.pn))}
}

// patternCredit is the credit of the pattern key in episode i, b bytes
// of its I/O there (unk of them by processes whose cgroup was not
// recorded), with the memory it took; and its own share, the larger of
// its I/O share and its memory share.
func (mc *modelCtx) patternCredit(key string, i int, b, unk uint64) (EpisodeCredit, float64) {
	e := &mc.res.Episodes[i]
	all := float64(max(1, e.scopeBytes()))
	cr := EpisodeCredit{Episode: i, Start: e.Start, Bytes: b, AllBytes: e.scopeBytes(), OutsideBytes: e.OutsideBytes,
		Share: round3(float64(b) / all), UnknownBytes: unk,
		MemBytes: mc.patternMem(key, i), MemAll: e.scopeMem(), MemOutside: e.OutsideMem}
	if cr.MemAll > 0 {
		cr.MemShare = round3(float64(cr.MemBytes) / float64(cr.MemAll))
	}
	return cr, math.Max(float64(b)/all, cr.MemShare)
}

// startsFit is sp as a proof's StartsPeriod.
func startsFit(sp *Period) *StartsFit {
	return &StartsFit{Period: sp.Period, PeriodS: sp.Period.Round(time.Millisecond).Seconds(),
		JitterS: sp.Jitter.Round(time.Millisecond).Seconds(), Matched: sp.Matched, Expected: sp.Expected, Score: sp.Score}
}

// bestRun is the run that did the most of byRun's bytes (on a tie, the
// one whose naming process has the lower PID), nil for none.
func bestRun(byRun map[*run]uint64) *run {
	var best *run
	for ru, b := range byRun {
		if best == nil || b > byRun[best] || b == byRun[best] && ru.name.pid < best.name.pid {
			best = ru
		}
	}
	return best
}

// runRoots are the root processes of byRun's runs.
func runRoots(byRun map[*run]uint64) map[*proc]bool {
	roots := map[*proc]bool{}
	for ru := range byRun {
		roots[ru.root] = true
	}
	return roots
}

// represent names rep, a pattern's processes summed, after best, the
// run that did the most of its bytes (none: program only).
func (mc *modelCtx) represent(rep *ProcActivity, program string, best *run) {
	rep.Program = program
	if best != nil {
		n := best.name
		rep.PID, rep.Comm, rep.Cmdline, rep.Unit, rep.StartedBy = n.pid, n.comm, n.cmdline, n.unit, mc.startedBy(n)
	}
}
