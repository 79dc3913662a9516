package correlate

import (
	"path"
	"slices"
	"strings"
	"time"

	"github.com/memdiag/memdiag/record"
)

// The causal stage ("weigh the chain", docs/analyze.md): where the
// recording holds the page-cache chain traced with eBPF (record.Chain),
// a culprit is credited with an episode for what its activity cost the
// victim, not for its share of the disk I/O. The chain of an episode
// (its intervals and the one before it) is: some process added pages to
// the page cache; reclaim took the victim's file pages; the victim's
// tasks stalled in reclaim and refaulted. The victim's pages are those
// charged to the recorded victim's memory cgroup (record.Header.Victim,
// "known"), else to the --cgroup scope's group, else to any group (host
// scope). A job's cost in an episode is
//
//	took + indirect × added / domainAdded
//
// took: the victim's file bytes its own processes' reclaim evicted
// (direct, or at a cgroup limit) while they added no page cache in the
// episode's window (they reclaimed for memory they took: RSS growth);
// indirect: the victim's bytes evicted by kswapd, by the known victim's
// own reclaim (it pressed for room that others' cache held), or by the
// reclaim of any process that added page cache in the domain in the
// window: which adder runs reclaim is the one whose charge found the
// group full, a matter of timing, while every addition under the limit
// filled it (two jobs fired together, one adding 48 MiB and one 256 MiB,
// share the loss 16:84 whichever reclaimed). Those evictions are shared
// among the adders under both the evicted group and the reclaimer's
// (their lowest common group, which the limit reached holds; every
// group for reclaim because the host ran short) by what they added
// there; added: its processes' page-cache additions
// charged to a group in the victim's memory domain (sharing a cgroup
// ancestor other than the root with the victim's group, so competing
// under one limit; any group in host scope), the known victim's own
// left out; domainAdded: everyone's such additions. What a group under
// a memory limit of its own below the one reached added weighs at most
// that limit (record.Chain.Limits, heldWeights): it can never hold more.
// A group reclaiming
// its own pages, unless it is the known victim, stalled only itself and
// is no loss. The chain judges an episode when reclaim took at least
// Model.CreditFloor of the victim's pages in it: a culprit then needs a cost of
// at least Model.CreditFloor and Model.MinShare of the victim's loss, whatever disk
// I/O it did (a job reading with O_DIRECT fills no cache; a neighbour
// reclaiming inside its own limit takes nothing of the victim's), and
// its share is that cost share. Memory a culprit took (RSS growth) is
// weighed as before: the chain traces file pages only. Where an
// episode's intervals were not traced, or reclaim took less of the
// victim's pages, credits fall back to correlation.

// ChainEpisode is the victim's side of an episode's traced chain.
type ChainEpisode struct {
	// Victim is the memory cgroup whose pages count as the victim's
	// (record.Victim.Memcg, else the --cgroup scope's path), "" in host
	// scope: every group's.
	Victim string `json:"victim_memcg"`
	// VictimKnown: Victim is a recorded victim's own group
	// (record.Header.Victim), not a --cgroup scope that may hold the
	// jobs too: its own reclaim and its own additions are the victim's.
	VictimKnown bool `json:"victim_known"`
	// VictimPID is the recorded victim's process (0 when it was given as
	// a unit or cgroup: then every process of its group is the victim).
	// Another process in the victim's own group — a job started there —
	// is not the victim: its additions compete for the group's memory,
	// and its reclaim of the group's pages takes them from the victim.
	// The victim's process is it, or one with its comm (a prefork
	// server's workers).
	VictimPID  int `json:"victim_pid,omitempty"`
	victimComm string
	// Limit is the outermost group whose memory limit bounds the
	// victim's (record.Victim.Domain: its Limit, or the last of its
	// OuterLimits, a node's): the groups under it are its domain.
	// Unlimited: the victim is known and no group limits it, so every
	// group competes (host-wide reclaim). Neither: the domain is the
	// groups that share a top-level group with Victim.
	Limit     string `json:"limit_memcg,omitempty"`
	Unlimited bool   `json:"unlimited,omitempty"`
	// EvictedBytes is the victim's file pages reclaim took in the
	// episode and the interval before it; KswapdBytes and SelfBytes the
	// parts taken by kswapd and by the victim's own reclaim.
	EvictedBytes uint64 `json:"evicted_bytes"`
	KswapdBytes  uint64 `json:"kswapd_bytes"`
	SelfBytes    uint64 `json:"self_bytes"`
	// PooledBytes is the part taken by the reclaim of processes that
	// added page cache in the victim's domain in the window: shared
	// among the adders under the limit reached by what they added there.
	PooledBytes uint64 `json:"pooled_bytes"`
	// RefaultBytes is what the victim read back of pages evicted shortly
	// before; ReclaimStall the time its tasks spent in direct and
	// cgroup-limit reclaim.
	RefaultBytes uint64 `json:"refault_bytes"`
	// RefaultsUntraced: the kernel did not let refaults be traced in
	// some of its intervals (record.Chain.Untraced): RefaultBytes is
	// then not the victim's refaults.
	RefaultsUntraced bool          `json:"refaults_untraced,omitempty"`
	ReclaimStall     time.Duration `json:"-"`
	StallS           float64       `json:"reclaim_stall_s"`
	// AddedBytes is every other process's page-cache additions in the
	// victim's memory domain. HeldBytes is what they weigh together when
	// the memory limits of some adders' own groups cap them
	// (heldWeights), 0 when none did.
	AddedBytes uint64 `json:"domain_added_bytes"`
	HeldBytes  uint64 `json:"domain_held_bytes,omitempty"`
	// Judged: reclaim took at least Model.CreditFloor of the victim's pages,
	// so the chain decides the credits of this episode.
	Judged bool `json:"judged"`
	// From and To span the traced intervals.
	From time.Time `json:"from"`
	To   time.Time `json:"to"`

	ks     []int        // the traced intervals
	adders map[int]bool // the PIDs that added competing page cache in them
	// pools: the victim's bytes the adders' reclaim took, by the group
	// they competed under (poolGroup), and every adder's additions there.
	pools map[string]*chainPool
	// limits: the memory limits of the adders' groups and their
	// ancestors recorded in the window (record.Chain.Limits), the lowest
	// seen for each group; addsBy: the competing additions by memory
	// cgroup (as recorded). domain: the weight of each group's additions
	// against the others' in the whole domain (heldWeights), held: the
	// weighed sum.
	limits map[string]uint64
	addsBy map[string]uint64
	domain map[string]float64
	held   float64
}

// chainPool is the victim's pages taken by adders' reclaim under one
// group, the weight of each group's additions under it (heldWeights)
// and their sum.
type chainPool struct {
	took   uint64
	weight map[string]float64
	held   float64
}

// ChainCredit is a culprit's part of an episode's chain.
type ChainCredit struct {
	// AddedBytes is its processes' page-cache additions in the victim's
	// memory domain, AddedFrom and AddedTo the first and last interval
	// with them.
	AddedBytes uint64 `json:"added_bytes"`
	// HeldBytes is what its additions weigh against the other adders'
	// when a memory limit of its own group (below the domain's) caps
	// them: that group can never hold more page cache than its limit,
	// however much it adds (heldWeights). 0 when nothing capped them.
	HeldBytes uint64    `json:"held_bytes,omitempty"`
	AddedFrom time.Time `json:"added_from,omitzero"`
	AddedTo   time.Time `json:"added_to,omitzero"`
	// TookBytes is the victim's file pages its own processes' reclaim
	// evicted; CostBytes the part of TookBytes its processes took while
	// adding no page cache, plus its share (AddedBytes /
	// ChainEpisode.AddedBytes, each weighed by heldWeights: HeldBytes /
	// HeldBytes where a limit capped them) of what kswapd, the victim's
	// own reclaim and the adders' reclaim took (ChainEpisode.PooledBytes);
	// CostShare CostBytes / ChainEpisode.EvictedBytes.
	TookBytes uint64  `json:"took_bytes"`
	CostBytes uint64  `json:"cost_bytes"`
	CostShare float64 `json:"cost_share"`
}

// chainOK says whether the credit meets the chain's bar (m's CreditFloor
// and MinShare).
func (c *ChainCredit) chainOK(m ModelThresholds) bool {
	return c.CostBytes >= m.CreditFloor && c.CostShare >= m.MinShare
}

// victimMemcg is the memory cgroup whose pages are the victim's: the
// recorded victim's (known), else the --cgroup scope's path below its
// mount; "" in host scope.
func victimMemcg(h *record.Header, scope string) (v string, known bool) {
	if h.Victim != nil && h.Victim.Memcg != "" && h.Victim.Memcg != "/" {
		return path.Clean(h.Victim.Memcg), true
	}
	if scope != ScopeCgroup || h.Cgroup == "" {
		return "", false
	}
	if rel, ok := hierarchyPath(h.Cgroup); ok && rel != "/" {
		return rel, false
	}
	return "", false
}

// memcgWithin says whether group g ("/a/b") is dir or below it.
func memcgWithin(dir, g string) bool {
	if g == "" {
		return false
	}
	g = path.Clean("/" + g)
	return dir == "/" || g == dir || strings.HasPrefix(g, dir+"/")
}

// sameDomain says whether group g shares an ancestor other than the root
// with the victim's group v: their pages may compete under one limit
// (used when the limit was not recorded).
func sameDomain(v, g string) bool {
	if v == "" {
		return true
	}
	top := func(s string) string {
		s = strings.TrimPrefix(path.Clean("/"+s), "/")
		if i := strings.IndexByte(s, '/'); i >= 0 {
			s = s[:i]
		}
		return s
	}
	t := top(g)
	return t != "" && t == top(v)
}

// episodeWindows calls fn for each interval k of each episode ep's
// window: its intervals and the one before it (a job fills the cache,
// then the victim's stall rises). Episodes are in time order and do not
// overlap: one sweep.
func episodeWindows(sr *Series, eps []Episode, fn func(ep, k int)) {
	ep := 0
	for k, iv := range sr.intervals() {
		for ep < len(eps) && eps[ep].End.Before(iv.End) {
			ep++
		}
		if ep >= len(eps) {
			return
		}
		if e := &eps[ep]; iv.End.Before(e.Start) || iv.Start.Before(e.Start.Add(-iv.Dt)) {
			continue
		}
		fn(ep, k)
	}
}

// chainEpisodes fills mc.chain: the victim's side of every episode's
// traced chain (nil entries where none of its intervals was traced).
func (mc *modelCtx) chainEpisodes() {
	res, sr := mc.res, mc.sr
	mc.chain = make([]*ChainEpisode, len(res.Episodes))
	if !sr.chainTraced {
		return
	}
	v, known := victimMemcg(&sr.Header, mc.scope)
	episodeWindows(sr, res.Episodes, func(ep, k int) {
		iv := sr.intervals()[k]
		if k >= len(sr.chains) || sr.chains[k] == nil {
			return
		}
		ce := mc.chain[ep]
		if ce == nil {
			ce = newChainEpisode(&sr.Header, v, known, iv.Start)
			mc.chain[ep] = ce
		}
		ce.ks = append(ce.ks, k)
		ce.To = iv.End
		ce.add(sr.chains[k], v)
	})
	for _, ce := range mc.chain {
		if ce != nil {
			ce.pool(sr.chains)
			ce.Judged = ce.EvictedBytes >= mc.o.Model.CreditFloor
			ce.StallS = round3(ce.ReclaimStall.Seconds())
		}
	}
}

// pool finds the processes that added competing page cache in ce's
// intervals (chains: the recording's, by interval), the victim's pages
// their reclaim took (PooledBytes) by the group they competed under,
// and what was added under each such group.
func (ce *ChainEpisode) pool(chains []*record.Chain) {
	ce.adders, ce.pools, ce.addsBy = map[int]bool{}, map[string]*chainPool{}, map[string]uint64{}
	for _, k := range ce.ks {
		for _, a := range chains[k].Adds {
			if !ce.competes(a) {
				continue
			}
			ce.addsBy[a.Memcg] += a.Bytes
			if a.PID > 0 && a.Bytes > 0 {
				ce.adders[a.PID] = true
			}
		}
	}
	for _, k := range ce.ks {
		for _, ev := range chains[k].Evictions {
			if loss, indirect := ce.loss(ev); loss && !indirect && ce.adders[ev.PID] {
				g := poolGroup(ev)
				if ce.pools[g] == nil {
					ce.pools[g] = &chainPool{}
				}
				ce.pools[g].took += ev.Bytes
				ce.PooledBytes += ev.Bytes
			}
		}
	}
	for g, pl := range ce.pools {
		pl.weight, pl.held = heldWeights(g, ce.addsBy, ce.limits)
	}
	dom := ce.Limit
	if dom == "" {
		dom = "/"
	}
	ce.domain, ce.held = heldWeights(dom, ce.addsBy, ce.limits)
	if h := uint64(ce.held + 0.5); h < ce.AddedBytes {
		ce.HeldBytes = h
	}
}

// heldWeights weighs the page cache added under group p in a window
// (addsBy: bytes by memory cgroup) for sharing a loss under p's limit:
// each group's additions count as they are, except that the groups
// under a memory limit of their own below p (limits, by group) weigh
// together at most that limit, their additions scaled down alike,
// innermost limit first. A group under its own limit can never hold more
// page cache than the limit however much it adds: past it, its charges
// reclaim its own pages (mm/memcontrol.c try_charge_memcg reclaims at
// the first ancestor over its limit, which is its own), so its churn
// takes nothing of the others' beyond what it can hold. weight is each
// memory cgroup's weight per byte added (1 uncapped), held the weighed
// sum.
func heldWeights(p string, addsBy map[string]uint64, limits map[string]uint64) (weight map[string]float64, held float64) {
	weight = map[string]float64{}
	var gs []string // the groups under p, sorted: sums in a fixed order, the same to the bit in every run
	for g := range addsBy {
		if memcgWithin(p, g) {
			weight[g] = 1
			gs = append(gs, g)
		}
	}
	slices.Sort(gs)
	var capped []string
	for l := range limits {
		if l != p && memcgWithin(p, l) {
			capped = append(capped, l)
		}
	}
	// Innermost first: deeper groups, then by name for a fixed order.
	slices.SortFunc(capped, func(a, b string) int {
		if da, db := strings.Count(a, "/"), strings.Count(b, "/"); da != db {
			return db - da
		}
		return strings.Compare(a, b)
	})
	for _, l := range capped {
		var sum float64
		for _, g := range gs {
			if memcgWithin(l, g) {
				sum += weight[g] * float64(addsBy[g])
			}
		}
		if lim := float64(limits[l]); sum > lim {
			for _, g := range gs {
				if memcgWithin(l, g) {
					weight[g] *= lim / sum
				}
			}
		}
	}
	for _, g := range gs {
		held += weight[g] * float64(addsBy[g])
	}
	return weight, held
}

// poolGroup is the group whose limit an eviction's reclaim competed
// under, or a group the limit holds: the lowest group holding both the
// evicted pages' and the reclaimer's; "/" for reclaim because the host
// ran short.
func poolGroup(ev record.ChainEviction) string {
	if ev.Reclaimer != record.ReclaimMemcg {
		return "/"
	}
	a := strings.Split(strings.Trim(path.Clean("/"+ev.Memcg), "/"), "/")
	b := strings.Split(strings.Trim(path.Clean("/"+ev.ReclMemcg), "/"), "/")
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] && a[n] != "" {
		n++
	}
	return "/" + strings.Join(a[:n], "/")
}

// newChainEpisode is an episode's chain from its first traced interval
// (from): the victim's memory cgroup v (known: found), its process and
// the group whose limit it competes under (none: Unlimited).
func newChainEpisode(h *record.Header, v string, known bool, from time.Time) *ChainEpisode {
	ce := &ChainEpisode{Victim: v, VictimKnown: known, From: from, limits: map[string]uint64{}}
	if vi := h.Victim; known && vi.PID > 0 {
		ce.VictimPID, ce.victimComm = vi.PID, vi.Comm
	}
	if vi := h.Victim; known && vi.Domain() != "" && vi.Domain() != "/" {
		ce.Limit = path.Clean("/" + vi.Domain())
	} else if known {
		ce.Unlimited = true
	}
	return ce
}

// add adds one interval's traced chain ch to ce: the victim's pages
// evicted (by kswapd or its own reclaim), the page cache others added in
// its domain, its refaults and its reclaim stalls (v: the victim's
// memory cgroup, "" every one).
func (ce *ChainEpisode) add(ch *record.Chain, v string) {
	if slices.Contains(ch.Untraced, "refaults") {
		ce.RefaultsUntraced = true
	}
	for _, l := range ch.Limits {
		g := path.Clean("/" + l.Group)
		if old, ok := ce.limits[g]; !ok || l.Bytes < old {
			ce.limits[g] = l.Bytes
		}
	}
	for _, ev := range ch.Evictions {
		loss, indirect := ce.loss(ev)
		if !loss {
			continue
		}
		ce.EvictedBytes += ev.Bytes
		if indirect {
			if ev.Reclaimer == record.ReclaimKswapd || ev.Reclaimer == record.ReclaimOther {
				ce.KswapdBytes += ev.Bytes
			} else {
				ce.SelfBytes += ev.Bytes
			}
		}
	}
	for _, a := range ch.Adds {
		if ce.competes(a) {
			ce.AddedBytes += a.Bytes
		}
	}
	for _, r := range ch.Refaults {
		if v == "" || memcgWithin(v, r.Memcg) && ce.victimProc(r.PID, r.Comm) {
			ce.RefaultBytes += r.Bytes
		}
	}
	for _, s := range ch.Stalls {
		if v == "" || memcgWithin(v, s.Memcg) && ce.victimProc(s.PID, s.Comm) {
			ce.ReclaimStall += s.Direct + s.Limit
		}
	}
}

// loss says whether an eviction took the victim's pages, and whether
// it did so indirectly: by kswapd, or by the victim's own reclaim (it
// pressed for room that others' cache held), shared among those who
// filled the domain. A group reclaiming its own pages, when it is not
// the known victim, stalled only itself: no loss.
func (ce *ChainEpisode) loss(ev record.ChainEviction) (loss, indirect bool) {
	v := ce.Victim
	if v != "" && !memcgWithin(v, ev.Memcg) || v == "" && ev.Memcg == "" {
		return false, false
	}
	if ev.Reclaimer == record.ReclaimKswapd || ev.Reclaimer == record.ReclaimOther {
		return true, true
	}
	// A reclaimer in the victim's own group is the victim's own reclaim
	// (it pressed for room that others' cache held: indirect) unless it
	// is another process there, a job started in the victim's group: its
	// reclaim takes the victim's pages itself.
	inVictimGroup := ce.VictimKnown && memcgWithin(v, ev.ReclMemcg)
	victimReclaims := inVictimGroup && ce.victimProc(ev.PID, ev.Comm)
	self := ev.ReclMemcg != "" && path.Clean("/"+ev.ReclMemcg) == path.Clean("/"+ev.Memcg)
	if self && !inVictimGroup {
		return false, false
	}
	return true, victimReclaims
}

// victimProc says whether a process of the victim's group is the victim
// itself: always for a victim given as a unit or cgroup (VictimPID 0),
// else its PID or its comm (rows folded into "others" have PID 0 and
// are not).
func (ce *ChainEpisode) victimProc(pid int, comm string) bool {
	if ce.VictimPID == 0 {
		return true
	}
	return pid == ce.VictimPID || pid > 0 && comm != "" && comm == ce.victimComm
}

// competes says whether a page-cache addition competes with the
// victim's pages: it is charged to a group in the victim's domain and,
// for a known victim, is not the victim's own (its refaults are the harm,
// not a cause) — another process in the victim's own group competes.
func (ce *ChainEpisode) competes(a record.ChainAdd) bool {
	g := a.Memcg
	if ce.VictimKnown && memcgWithin(ce.Victim, g) {
		return !ce.victimProc(a.PID, a.Comm)
	}
	switch {
	case ce.Limit != "":
		return memcgWithin(ce.Limit, g)
	case ce.Unlimited:
		return true // only host-wide reclaim reaches the victim: every group competes
	}
	return sameDomain(ce.Victim, g)
}

// chainCredit is the part of episode i's chain done by the processes
// mine accepts; nil when the episode was not traced.
func (mc *modelCtx) chainCredit(i int, mine func(*proc) bool) *ChainCredit {
	if i >= len(mc.chain) || mc.chain[i] == nil {
		return nil
	}
	ce, sr := mc.chain[i], mc.sr
	c := &ChainCredit{}
	var direct uint64              // taken by its reclaim while adding no cache
	mineIn := map[string]float64{} // its weighed additions under each pool's group
	var held float64               // its weighed additions in the domain
	is := func(pid, k int) bool {
		if pid <= 0 {
			return false
		}
		p := mc.pt.lookup(pid, 0, sr.intervals()[k].End)
		return p != nil && mine(p)
	}
	for _, k := range ce.ks {
		ch := sr.chains[k]
		for _, ev := range ch.Evictions {
			if loss, indirect := ce.loss(ev); loss && !indirect && is(ev.PID, k) {
				c.TookBytes += ev.Bytes
				if !ce.adders[ev.PID] {
					direct += ev.Bytes
				}
			}
		}
		for _, a := range ch.Adds {
			if ce.competes(a) && is(a.PID, k) {
				for g, pl := range ce.pools {
					mineIn[g] += pl.weight[a.Memcg] * float64(a.Bytes)
				}
				held += ce.domain[a.Memcg] * float64(a.Bytes)
				c.AddedBytes += a.Bytes
				if c.AddedFrom.IsZero() {
					c.AddedFrom = sr.intervals()[k].Start
				}
				c.AddedTo = sr.intervals()[k].End
			}
		}
	}
	if h := uint64(held + 0.5); h < c.AddedBytes {
		c.HeldBytes = h
	}
	c.CostBytes = direct
	if ce.held > 0 && held > 0 {
		c.CostBytes += uint64(held / ce.held * float64(ce.KswapdBytes+ce.SelfBytes))
	}
	for g, pl := range ce.pools {
		if pl.held > 0 && mineIn[g] > 0 {
			c.CostBytes += uint64(mineIn[g] / pl.held * float64(pl.took))
		}
	}
	c.CostBytes = min(c.CostBytes, ce.EvictedBytes)
	if ce.EvictedBytes > 0 {
		c.CostShare = round3(float64(c.CostBytes) / float64(ce.EvictedBytes))
	}
	return c
}

// chainJudge applies the chain to a credit decision: judged reports
// whether the chain decides episode i, ok whether the processes meet
// its bar there, and cc is their part (nil when not traced).
func (mc *modelCtx) chainJudge(i int, mine func(*proc) bool) (cc *ChainCredit, judged, ok bool) {
	cc = mc.chainCredit(i, mine)
	if cc == nil {
		return nil, false, false
	}
	return cc, mc.chain[i].Judged, cc.chainOK(mc.o.Model)
}

// chainAllows says whether the process pattern key (runOf's) may be
// credited with episode i by its I/O: yes unless the chain judges the
// episode and its processes' cost to the victim misses the bar.
func (mc *modelCtx) chainAllows(i int, key string) bool {
	if i >= len(mc.chain) || mc.chain[i] == nil || !mc.chain[i].Judged {
		return true
	}
	procs := mc.patternProcs(key)
	_, _, ok := mc.chainJudge(i, func(p *proc) bool { return procs[p] })
	return ok
}

// inScope says whether a process in cgroup cg (its /proc/PID/cgroup
// path) can cause the reclaim of the recorded scope: it is related to
// the --cgroup group (cgroupRelated), or, for a recorded victim whose
// memory a group limits (record.Victim.Limit: its own or an ancestor),
// it runs anywhere under the outermost such group (Victim.Domain),
// whose pages compete under the same limit (a sibling job of the
// victim's slice, or a job beside the slice in a node whose limit holds
// both). A limit at "/" is a container's, at the root of its cgroup
// namespace (cgroupfs.MemoryLimits): every process recorded in the
// container is under it.
func inScope(h *record.Header, cg string) bool {
	if cgroupRelated(h.Cgroup, cg) {
		return true
	}
	if v := h.Victim; v != nil && v.Domain() != "" {
		return memcgWithin(path.Clean("/"+v.Domain()), cg)
	}
	return false
}
