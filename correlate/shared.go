package correlate

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// sharedPatterns names the recurring process patterns that named jobs
// shadow: a pattern (runOf: one program under one lineage) that did its
// share of episodes a named timer or cron job is credited with too.
// recurringUnexplained weighs only the episodes no named job explains,
// so a neighbour's timer firing into most of a loop's episodes hid the
// loop (docs/analyze.md, "Episodes two culprits share").
//
// A pattern is weighed here only when it is credited, by the jobs'
// rule (Model.CreditFloor and Model.MinShare of the episode's in-scope I/O, every
// job's processes in the denominator but never in the pattern), with at
// least one episode a named job explains, and is named only with the
// evidence a job needs and a loop shows: a run of its own started for
// each credited episode (its root's exec event within one wake-up
// before the episode or in it), at least periodMinHits credits, its
// runs' recorded starts recurring (runPeriod) and at least half of them
// credited, a median start no later than one interval after the stall
// began, and then, as a job: p_null below Model.MaxChance or a median share
// of at least Model.SoloShare. Processes
// any job claims (jobActivity) never join a pattern here: a job is
// judged as a job. A program already named as a process culprit is
// left alone.
func (mc *modelCtx) sharedPatterns(named []Culprit, runs []*jobRun) []Culprit {
	if !mc.recorded {
		return nil
	}
	byJob := map[int][]string{} // episode → the named jobs credited with it
	taken := map[string]bool{}
	for _, c := range named {
		switch c.Kind {
		case KindTimer, KindCron:
			for _, e := range c.Episodes {
				byJob[e] = append(byJob[e], c.Name)
			}
		case KindProcess:
			taken[c.Name] = true
		}
	}
	if len(byJob) == 0 {
		return nil
	}
	pats, order := mc.creditShared(runs)
	var out []Culprit
	for _, key := range order {
		p := pats[key]
		if taken[p.program] || len(p.eps) < periodMinHits {
			continue
		}
		if c := mc.weighShared(p, byJob); c != nil {
			out = append(out, *c)
			taken[p.program] = true
		}
	}
	slices.SortFunc(out, func(a, b Culprit) int {
		if c := cmp.Compare(b.EpisodesExplained, a.EpisodesExplained); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return out
}

// sharedPattern is a pattern credited by creditShared: per credited
// episode (eps, in order) its I/O (bytes, unk the part whose cgroup was
// not recorded, io its reads and writes), its lead over the stall onset
// and the bytes of each of its runs.
type sharedPattern struct {
	key, program string
	eps          []int
	bytes, unk   map[int]uint64
	io           map[int]ProcActivity
	lead         map[int]float64
	runs         map[int]map[*run]uint64
}

// sharedIO is a pattern's I/O in one episode (sharedEpisode).
type sharedIO struct {
	io    ProcActivity
	unk   uint64
	first time.Time // its runs' earliest start for this episode
	runs  map[*run]uint64
	ru    *run
}

// creditShared is the credit stage of sharedPatterns: per episode, each
// pattern of processes no job claims that started a run for it and did
// at least Model.CreditFloor and Model.MinShare of its in-scope I/O (and, traced,
// cost the victim some); the patterns in order of first credit.
func (mc *modelCtx) creditShared(runs []*jobRun) (map[string]*sharedPattern, []string) {
	jobProc := map[*proc]bool{}
	for _, r := range runs {
		for _, p := range r.procs {
			jobProc[p] = true
		}
	}
	pats := map[string]*sharedPattern{}
	var order []string
	for i := range mc.res.Episodes {
		e := &mc.res.Episodes[i]
		if e.scopeBytes() == 0 {
			continue
		}
		per, keys := mc.sharedEpisode(i, jobProc)
		for _, key := range keys {
			x := per[key]
			if x.first.IsZero() || x.io.Bytes() < mc.o.Model.CreditFloor || float64(x.io.Bytes()) < mc.o.Model.MinShare*float64(e.scopeBytes()) {
				continue
			}
			if !mc.chainAllows(i, key) {
				continue // traced: it cost the victim nothing
			}
			p := pats[key]
			if p == nil {
				p = &sharedPattern{key: key, program: x.ru.program, bytes: map[int]uint64{}, unk: map[int]uint64{},
					io: map[int]ProcActivity{}, lead: map[int]float64{}, runs: map[int]map[*run]uint64{}}
				pats[key] = p
				order = append(order, key)
			}
			p.eps = append(p.eps, i)
			p.bytes[i], p.unk[i], p.io[i], p.runs[i] = x.io.Bytes(), x.unk, x.io, x.runs
			p.lead[i] = math.Round(onsetOf(e).Sub(x.first).Seconds()*10) / 10
		}
	}
	return pats, order
}

// sharedEpisode sums episode i's in-scope I/O of the processes no job
// claims (jobProc) by pattern (runOf), with the earliest start of a run
// started for the episode; the patterns in order of first I/O.
func (mc *modelCtx) sharedEpisode(i int, jobProc map[*proc]bool) (map[string]*sharedIO, []string) {
	e := &mc.res.Episodes[i]
	per := map[string]*sharedIO{}
	var keys []string
	for _, pa := range mc.sr.parts[e.Start] {
		if pa.Program == "" || pa.Bytes() == 0 || pa.OutsideScope {
			continue
		}
		pr := mc.pt.lookup(pa.procPID(), pa.start, e.End)
		if pr == nil || jobProc[pr] {
			continue
		}
		ru := mc.runOf(pr)
		x := per[ru.key]
		if x == nil {
			x = &sharedIO{runs: map[*run]uint64{}, ru: ru}
			per[ru.key] = x
			keys = append(keys, ru.key)
		}
		x.io.ReadBytes += pa.ReadBytes
		x.io.WriteBytes += pa.WriteBytes
		if pa.CgroupUnknown {
			x.unk += pa.Bytes()
		}
		x.runs[ru] += pa.Bytes()
		// A run started for this episode: its root's exec within one
		// wake-up before the episode, or in it.
		if at := ru.root.execAt; !at.IsZero() && !at.Before(e.Start.Add(-mc.wake)) && !at.After(e.End) {
			if x.first.IsZero() || at.Before(x.first) {
				x.first = at
			}
		}
	}
	return per, keys
}

// weighShared is the null-model and naming stage of sharedPatterns: p
// is named (explainShared) when it shares an episode with a named job
// (byJob), its runs' starts recur, it started no later than one
// interval after the stall, at least half its runs were credited, and
// p_null is below Model.MaxChance or its median share at least Model.SoloShare;
// else nil.
func (mc *modelCtx) weighShared(p *sharedPattern, byJob map[int][]string) *Culprit {
	res := mc.res
	var with []string
	for _, i := range p.eps {
		for _, nm := range byJob[i] {
			if !slices.Contains(with, nm) {
				with = append(with, nm)
			}
		}
	}
	if len(with) == 0 {
		return nil // recurringUnexplained's to weigh
	}
	sp := mc.runPeriod(p.key)
	if sp == nil {
		return nil
	}
	var shares, leads []float64
	for _, i := range p.eps {
		shares = append(shares, float64(p.bytes[i])/float64(res.Episodes[i].scopeBytes()))
		leads = append(leads, p.lead[i])
	}
	if median(leads) < -res.Interval.Seconds() {
		return nil // it started after the stall: riding it, not causing it
	}
	starts := mc.runStarts(p.key)
	if 2*len(p.eps) < len(starts) {
		// Most of its runs raised no episode: a loop busy all along
		// that the job's episodes happen to meet.
		return nil
	}
	nf := mc.patternNull(mc.patternProcs(p.key), p.eps, p.bytes)
	if nf.pn >= mc.o.Model.MaxChance && median(shares) < mc.o.Model.SoloShare {
		return nil
	}
	slices.Sort(with)
	pf := mc.patternProof(nf)
	pf.Runs = len(starts)
	pf.Repeat = round3(sp.Score * float64(len(p.eps)) / float64(max(len(p.eps), len(starts))))
	pf.Starts, pf.SharedWith, pf.StartsPeriod = starts, with, startsFit(sp)
	return mc.explainShared(p, pf, sp)
}

// explainShared is the explain stage of sharedPatterns: p named as a
// process culprit, with its credits, its share and whether it started
// late, and its representative run.
func (mc *modelCtx) explainShared(p *sharedPattern, pf *Proof, sp *Period) *Culprit {
	res := mc.res
	var own []float64
	timed, late := 0, 0
	byRun := map[*run]uint64{}
	var rep ProcActivity
	for _, i := range p.eps {
		l := p.lead[i]
		c, share := mc.patternCredit(p.key, i, p.bytes[i], p.unk[i])
		c.LeadS = &l
		own = append(own, share)
		pf.Credits = append(pf.Credits, c)
		timed++
		if l < -res.Interval.Seconds() {
			late++
		}
		rep.ReadBytes += p.io[i].ReadBytes
		rep.WriteBytes += p.io[i].WriteBytes
		for ru, x := range p.runs[i] {
			byRun[ru] += x
		}
	}
	pf.Share = round3(median(own))
	pf.Late = timed > 0 && late == timed
	roots := runRoots(byRun)
	mc.represent(&rep, p.program, bestRun(byRun))
	c := &Culprit{Kind: KindProcess, Name: p.program, EpisodesTotal: len(res.Episodes), Episodes: slices.Clone(p.eps),
		EpisodesExplained: len(p.eps), Period: sp.Period, Processes: []ProcActivity{rep},
		BytesPerEpisode: rep.Bytes() / uint64(len(p.eps)), Proof: pf, Runs: len(roots),
		NewEachTime: len(roots) >= len(p.eps) && startedAnew(rep)}
	c.Confidence = pf.confidence(mc.o.Model.LateFactor)
	return c
}
