package correlate

import (
	"math"
	"slices"
	"strings"
)

// Named jobs are left undecided (Result.Undecided) when correlation
// cannot tell which of them did the harm. Jobs are fired together when
// they started in the same wake-up (Proof.FiresWith) in at least
// Model.UndecidedOverlap of the smaller one's credited episodes and no traced
// page-cache chain judged either's credit in those episodes
// (EpisodeCredit.ChainJudged); fired together is taken across jobs (a
// group). A group is undecided, whole, when its second-largest job's
// work — the median over its credits of its I/O plus the memory it took,
// EpisodeCredit.Bytes + MemBytes — is at least Model.UndecidedShare of the
// largest's, or when the largest did less than 1/Model.UndecidedShare times
// another's work in more than 1 − Model.UndecidedOverlap of the episodes both
// are credited with (undecidedWhy): no job stands out. When one does, it stays named, and so
// does any other whose own median share met Model.MinShare; the rest
// rode along (credited only with their wake-up) and are not named
// (NotRunRodeAlong).

// splitUndecided is the undecided stage of the culprit model. Jobs fired
// together that did about the same work in the same episodes look alike
// to every test correlation has — their shares, their firings, their
// null models — while only one may have taken the victim's memory: a
// buffered reader beside one with O_DIRECT (no page cache touched), a job
// filling the limit the victim shares beside a neighbour churning its own
// small limit. Only the traced chain tells them apart (docs/analyze.md,
// "Undecided"). Naming them all would name bystanders; naming the first
// by a small difference in bytes would be a guess. So such a group leaves
// cs for res.Undecided, each job listing the others in
// Culprit.UndecidedWith; the episodes they alone explain keep no culprit.
// In a group where one job stands out, the jobs credited only through
// their wake-up (own share under Model.MinShare) leave cs for res.NotRun
// as NotRunRodeAlong: what correlation has on them is the standout's.
func (mc *modelCtx) splitUndecided(cs []Culprit) []Culprit {
	n := len(cs)
	root := make([]int, n)
	for i := range root {
		root[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		if root[i] != i {
			root[i] = find(root[i])
		}
		return root[i]
	}
	for a := 0; a < n; a++ {
		for b := a + 1; b < n; b++ {
			if firedTogether(&cs[a], &cs[b], mc.o.Model) {
				root[find(b)] = find(a)
			}
		}
	}
	groups := map[int][]int{}
	for i := range cs {
		groups[find(i)] = append(groups[find(i)], i)
	}
	// Each job's work once, each group's standout once.
	work := make([]float64, n)
	top := map[int]int{}           // group root → its standout, for groups where one stands out
	why := map[int]*UndecidedWhy{} // group root → why none does
	for r, g := range groups {
		if len(g) < 2 {
			continue
		}
		for _, k := range g {
			work[k] = workOf(&cs[k])
		}
		t := standout(work, g)
		if w := undecidedWhy(cs, work, t, g, mc.o.Model); w != nil {
			why[r] = w
		} else {
			top[r] = t
		}
	}
	var kept []Culprit
	for i := range cs {
		g := groups[find(i)]
		if len(g) < 2 {
			kept = append(kept, cs[i])
			continue
		}
		if t, ok := top[find(i)]; ok {
			if t != i && cs[i].Proof.Share < mc.o.Model.MinShare {
				mc.res.NotRun = append(mc.res.NotRun, rodeAlong(&cs[i], &cs[t], work[i], work[t]))
				continue
			}
			kept = append(kept, cs[i])
			continue
		}
		c := cs[i]
		for _, k := range g {
			if k != i {
				c.UndecidedWith = append(c.UndecidedWith, cs[k].Name)
			}
		}
		slices.Sort(c.UndecidedWith)
		c.Why = why[find(i)]
		mc.res.Undecided = append(mc.res.Undecided, c)
	}
	return kept
}

// undecidedWhy says why group g (two jobs or more; work by index, t
// its job with the most) has no job that stands out, nil when t does: t
// did more than 1/Model.UndecidedShare times every other member's work, by
// the median (work) and in at least Model.UndecidedOverlap of the episodes
// both are credited with. A standout by the median that is not one
// episode by episode (a neighbour whose reads ran from a third to nearly
// all of the job's) is no evidence of which did the harm. A member
// sharing no credited episode with t does not count against it.
func undecidedWhy(cs []Culprit, work []float64, t int, g []int, m ModelThresholds) *UndecidedWhy {
	next := -1
	for _, k := range g {
		if k != t && (next < 0 || work[k] > work[next]) {
			next = k
		}
	}
	w := &UndecidedWhy{Top: cs[t].Name, TopWork: uint64(work[t])}
	if work[t] > 0 && work[next] >= m.UndecidedShare*work[t] {
		w.Rule, w.Next, w.NextWork = UndecidedByMedian, cs[next].Name, uint64(work[next])
		return w
	}
	ct := creditsByEpisode(cs[t].Proof)
	for _, k := range g {
		if k == t {
			continue
		}
		shared, notTwice := 0, 0
		for _, cr := range cs[k].Proof.Credits {
			x, ok := ct[cr.Episode]
			if !ok {
				continue
			}
			shared++
			if float64(cr.Bytes+cr.MemBytes) >= m.UndecidedShare*float64(x.Bytes+x.MemBytes) {
				notTwice++
			}
		}
		if shared > 0 && float64(shared-notTwice) < m.UndecidedOverlap*float64(shared) {
			w.Rule, w.Next, w.NextWork, w.NotTwice, w.Shared = UndecidedByEpisodes, cs[k].Name, uint64(work[k]), notTwice, shared
			return w
		}
	}
	return nil
}

// workOf is a job's median work over its credits: its I/O plus the
// memory it took (EpisodeCredit.Bytes + MemBytes), bytes.
func workOf(c *Culprit) float64 {
	var w []float64
	for _, cr := range c.Proof.Credits {
		w = append(w, float64(cr.Bytes+cr.MemBytes))
	}
	return median(w)
}

// standout is the index of group g's job with the most work (work by
// index), the first of equals.
func standout(work []float64, g []int) int {
	top := g[0]
	for _, k := range g[1:] {
		if work[k] > work[top] {
			top = k
		}
	}
	return top
}

// rodeAlong is job c, credited only through the wake-up it shares with
// top (its own median share under Model.MinShare), as a job not named;
// work and topWork are their workOf.
func rodeAlong(c, top *Culprit, work, topWork float64) NotRun {
	pf := c.Proof
	u := &RanUnnamed{Processes: len(pf.Ties), Of: c.EpisodesTotal, Episodes: c.EpisodesExplained, Credited: len(pf.Credits),
		P: round4(math.Min(pf.PNull, pf.PFiring)), Share: pf.Share, RodeWith: top.Name}
	for _, cr := range pf.Credits {
		u.MaxBytes = max(u.MaxBytes, cr.Bytes)
		u.MaxShare = math.Max(u.MaxShare, cr.Share)
	}
	if topWork > 0 {
		u.WorkRatio = round3(work / topWork)
	}
	return NotRun{Name: c.Name, Kind: NotRunRodeAlong, Job: c.Job, Ran: u}
}

// firedTogether reports whether jobs a and b started in the same wake-up
// in most of their credited episodes, none judged by a traced chain (the
// rule above splitUndecided).
func firedTogether(a, b *Culprit, m ModelThresholds) bool {
	if !isJob(a) || !isJob(b) || a.Proof == nil || b.Proof == nil || len(a.Proof.Credits) == 0 || len(b.Proof.Credits) == 0 {
		return false
	}
	if !slices.Contains(a.Proof.FiresWith, b.Name) && !slices.Contains(b.Proof.FiresWith, a.Name) {
		return false
	}
	ca, cb := creditsByEpisode(a.Proof), creditsByEpisode(b.Proof)
	shared := 0
	for e, x := range ca {
		y, ok := cb[e]
		if !ok {
			continue
		}
		if x.ChainJudged || y.ChainJudged {
			return false
		}
		shared++
	}
	return shared > 0 && float64(shared) >= m.UndecidedOverlap*float64(min(len(ca), len(cb)))
}

func isJob(c *Culprit) bool { return c.Kind == KindTimer || c.Kind == KindCron }

// creditsByEpisode is pf's credits keyed by episode.
func creditsByEpisode(pf *Proof) map[int]EpisodeCredit {
	m := make(map[int]EpisodeCredit, len(pf.Credits))
	for _, c := range pf.Credits {
		m[c.Episode] = c
	}
	return m
}

// markUndecided gives each episode that no culprit explains, but
// undecided jobs do, their names joined by " or " as its culprit.
func markUndecided(res *Result) {
	for i := range res.Undecided {
		u := &res.Undecided[i]
		all := append([]string{u.Name}, u.UndecidedWith...)
		slices.Sort(all)
		names := strings.Join(all, " or ")
		for _, e := range u.Episodes {
			if res.Episodes[e].Culprit == "" {
				res.Episodes[e].Culprit = names
			}
		}
	}
}
