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
// rule (creditFloor and minShare of the episode's in-scope I/O, every
// job's processes in the denominator but never in the pattern), with at
// least one episode a named job explains, and is named only with the
// evidence a job needs and a loop shows: a run of its own started for
// each credited episode (its root's exec event within one wake-up
// before the episode or in it), at least periodMinHits credits, its
// runs' recorded starts recurring (runPeriod) and at least half of them
// credited, a median start no later than one interval after the stall
// began, and then, as a job: p_null below maxChance or a median share
// of at least soloShare. Processes
// any job claims (jobActivity) never join a pattern here: a job is
// judged as a job. A program already named as a process culprit is
// left alone.
func (mc *modelCtx) sharedPatterns(named []Culprit, runs []*jobRun) []Culprit {
	res := mc.res
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
	jobProc := map[*proc]bool{}
	for _, r := range runs {
		for _, p := range r.procs {
			jobProc[p] = true
		}
	}
	type pat struct {
		key, program string
		eps          []int
		bytes, unk   map[int]uint64
		io           map[int]ProcActivity
		lead         map[int]float64
		runs         map[int]map[*run]uint64
	}
	pats := map[string]*pat{}
	var order []string
	for i := range res.Episodes {
		e := &res.Episodes[i]
		if e.scopeBytes() == 0 {
			continue
		}
		type acc struct {
			io    ProcActivity
			unk   uint64
			first time.Time // its runs' earliest start for this episode
			runs  map[*run]uint64
			ru    *run
		}
		per := map[string]*acc{}
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
				x = &acc{runs: map[*run]uint64{}, ru: ru}
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
		for _, key := range keys {
			x := per[key]
			if x.first.IsZero() || x.io.Bytes() < creditFloor || float64(x.io.Bytes()) < minShare*float64(e.scopeBytes()) {
				continue
			}
			if !mc.chainAllows(i, key) {
				continue // traced: it cost the victim nothing
			}
			p := pats[key]
			if p == nil {
				p = &pat{key: key, program: x.ru.program, bytes: map[int]uint64{}, unk: map[int]uint64{},
					io: map[int]ProcActivity{}, lead: map[int]float64{}, runs: map[int]map[*run]uint64{}}
				pats[key] = p
				order = append(order, key)
			}
			p.eps = append(p.eps, i)
			p.bytes[i], p.unk[i], p.io[i], p.runs[i] = x.io.Bytes(), x.unk, x.io, x.runs
			p.lead[i] = math.Round(onsetOf(e).Sub(x.first).Seconds()*10) / 10
		}
	}
	m := 0
	for _, in := range mc.inEp {
		if !in {
			m++
		}
	}
	var out []Culprit
	for _, key := range order {
		p := pats[key]
		if taken[p.program] || len(p.eps) < periodMinHits {
			continue
		}
		var with []string
		for _, i := range p.eps {
			for _, nm := range byJob[i] {
				if !slices.Contains(with, nm) {
					with = append(with, nm)
				}
			}
		}
		if len(with) == 0 {
			continue // recurringUnexplained's to weigh
		}
		sp := mc.runPeriod(key)
		if sp == nil {
			continue
		}
		var shares, leads []float64
		for _, i := range p.eps {
			shares = append(shares, float64(p.bytes[i])/float64(res.Episodes[i].scopeBytes()))
			leads = append(leads, p.lead[i])
		}
		if median(leads) < -res.Interval.Seconds() {
			continue // it started after the stall: riding it, not causing it
		}
		starts := mc.runStarts(key)
		if 2*len(p.eps) < len(starts) {
			// Most of its runs raised no episode: a loop busy all along
			// that the job's episodes happen to meet.
			continue
		}
		procs := mc.patternProcs(key)
		var ps []*proc
		for pr := range procs {
			ps = append(ps, pr)
		}
		var cr []EpisodeCredit
		for _, i := range p.eps {
			cr = append(cr, EpisodeCredit{Episode: i, Bytes: p.bytes[i]})
		}
		act := mc.presence(ps, cr)
		q := float64(len(act)+1) / float64(m+2)
		qe := 1 - math.Pow(1-q, mc.epLen)
		pn := binomialTail(len(res.Episodes), len(p.eps), qe)
		if pn >= maxChance && median(shares) < soloShare {
			continue
		}
		slices.Sort(with)
		pf := &Proof{ProcessesRecorded: true, Ran: true, ShareScope: mc.scope, Ties: []Tie{}, FiringsMatched: []time.Time{}, FiringsMissed: []time.Time{},
			PFiring: 1, FiringsUnused: UnusedNoJob, Cap: 1,
			Presence: round4(q), PresentIntervals: len(act), OutsideIntervals: m, EpisodeIntervals: round4(mc.epLen), EpisodeChance: round4(qe), PNull: pn,
			P: pn, Strength: round4(strength(pn)), Runs: len(starts),
			Repeat: round3(sp.Score * float64(len(p.eps)) / float64(max(len(p.eps), len(starts)))),
			Starts: starts, SharedWith: with,
			StartsPeriod: &StartsFit{Period: sp.Period, PeriodS: sp.Period.Round(time.Millisecond).Seconds(),
				JitterS: sp.Jitter.Round(time.Millisecond).Seconds(), Matched: sp.Matched, Expected: sp.Expected, Score: sp.Score}}
		var own []float64
		timed, late := 0, 0
		byRun := map[*run]uint64{}
		roots := map[*proc]bool{}
		var rep ProcActivity
		for _, i := range p.eps {
			e := &res.Episodes[i]
			b := p.bytes[i]
			l := p.lead[i]
			c := EpisodeCredit{Episode: i, Start: e.Start, Bytes: b, AllBytes: e.scopeBytes(), OutsideBytes: e.OutsideBytes,
				Share: round3(float64(b) / float64(e.scopeBytes())), UnknownBytes: p.unk[i],
				MemBytes: mc.patternMem(key, i), MemAll: e.scopeMem(), MemOutside: e.OutsideMem, LeadS: &l}
			if c.MemAll > 0 {
				c.MemShare = round3(float64(c.MemBytes) / float64(c.MemAll))
			}
			own = append(own, math.Max(float64(b)/float64(e.scopeBytes()), c.MemShare))
			pf.Credits = append(pf.Credits, c)
			timed++
			if l < -res.Interval.Seconds() {
				late++
			}
			rep.ReadBytes += p.io[i].ReadBytes
			rep.WriteBytes += p.io[i].WriteBytes
			for ru, x := range p.runs[i] {
				byRun[ru] += x
				roots[ru.root] = true
			}
		}
		pf.Share = round3(median(own))
		pf.Late = timed > 0 && late == timed
		var best *run
		for ru, b := range byRun {
			if best == nil || b > byRun[best] || b == byRun[best] && ru.name.pid < best.name.pid {
				best = ru
			}
		}
		rep.Program = p.program
		if best != nil {
			n := best.name
			rep.PID, rep.Comm, rep.Cmdline, rep.Unit, rep.StartedBy = n.pid, n.comm, n.cmdline, n.unit, mc.startedBy(n)
		}
		c := Culprit{Kind: KindProcess, Name: p.program, EpisodesTotal: len(res.Episodes), Episodes: slices.Clone(p.eps),
			EpisodesExplained: len(p.eps), Period: sp.Period, Processes: []ProcActivity{rep},
			BytesPerEpisode: rep.Bytes() / uint64(len(p.eps)), Proof: pf, Runs: len(roots),
			NewEachTime: len(roots) >= len(p.eps) && startedAnew(rep)}
		c.Confidence = pf.confidence()
		out = append(out, c)
		taken[p.program] = true
	}
	slices.SortFunc(out, func(a, b Culprit) int {
		if c := cmp.Compare(b.EpisodesExplained, a.EpisodesExplained); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return out
}
