package report

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/internal/english"
	"github.com/memdiag/memdiag/timers"
)

// evidence writes a culprit's evidence, one finding a line, from its
// structured proof (correlate.Proof and the culprit's fields): what the
// text verdict prints and JSON's culprits[].evidence.
func evidence(r *correlate.Result, c *correlate.Culprit) []string {
	switch c.Kind {
	case correlate.KindTimer, correlate.KindCron:
		if c.Job == nil {
			return nil
		}
		if c.Proof == nil {
			return jobEvidence(r, c, nil, c.Job)[:1]
		}
		return jobEvidence(r, c, c.Proof, c.Job)
	case correlate.KindProcess:
		if c.Proof != nil {
			return processEvidence(r, c, c.Proof)
		}
	}
	var ev []string
	if l := recurrence(r); l != "" {
		ev = append(ev, l)
	}
	if blind := unseenIO(c); blind != "" {
		ev = append(ev, "cannot tell which timer, cron job or process it is: "+blind)
	} else {
		ev = append(ev, "no timer, cron job or process explains it")
	}
	// Programs that did the recurring episodes' I/O, not named.
	for _, p := range c.Programs {
		why := "but too few episodes to rule out chance"
		switch p.Unnamed {
		case correlate.UnnamedBusy:
			why = "but it was as busy outside them (less than 3 times its rate there): its I/O does not set the schedule"
		case correlate.UnnamedVictim:
			why = "but it is the victim, reading: pages of its own that reclaim took are read back in its episodes, so without the traced chain its reads are as likely the stall's effect as its cause"
		}
		ev = append(ev, fmt.Sprintf("%s did %.0f%% (median) of the I/O in %d of the %d recurring episodes, %s",
			p.Program, 100*p.Share, p.Episodes, p.Of, why))
	}
	return ev
}

// recurrence is the episodes' period: "recurs every 10s (±1s): 6 of 8
// episodes on the schedule, 2 missed, 2 off it"; "" without one.
func recurrence(r *correlate.Result) string {
	p := r.Period
	if p == nil {
		return ""
	}
	return fmt.Sprintf("recurs every %s (±%s): %d of %d episodes on the schedule, %d missed, %d off it",
		correlate.FormatDuration(p.Period), correlate.FormatDuration(p.Jitter), p.Matched, len(r.Episodes), p.Missed, p.Extra)
}

func jobEvidence(r *correlate.Result, c *correlate.Culprit, pf *correlate.Proof, job *timers.Job) []string {
	var ev []string
	n := c.EpisodesTotal
	sched := strings.Join(job.Schedule, ", ")
	if sched == "" {
		sched = "no calendar schedule"
	}
	every := ""
	if c.Period > 0 {
		every = "every " + correlate.FormatDuration(c.Period) + " "
	}
	ev = append(ev, fmt.Sprintf("%s job, fires %s(%s), defined in %s", job.Source, every, sched, jobFile(job)))
	if pf == nil {
		return ev
	}
	if len(pf.Ties) > 0 {
		ev = append(ev, "its processes: "+tieSummary(pf.Ties))
	}
	if k := len(pf.Credits); k > 0 {
		if m, ok := memCredit(pf); ok {
			ev = append(ev, fmt.Sprintf("credited with %d of %d episodes for the memory it took: its processes' resident memory grew %s per episode (median, anon + file), %s; its I/O was %s per episode, %s%s",
				k, n, correlate.FormatBytes(m.bytes), memShareOf(pf, m), correlate.FormatBytes(c.BytesPerEpisode), shareOf(pf, m.ioShare), leadOf(r, pf)))
		} else {
			ev = append(ev, fmt.Sprintf("credited with %d of %d episodes: its processes did %s per episode, %s%s",
				k, n, correlate.FormatBytes(c.BytesPerEpisode), shareOf(pf, pf.Share), leadOf(r, pf)))
		}
	}
	if l := chainEvidence(r, pf); l != "" {
		ev = append(ev, l)
	}
	if l := sharedWith(r, c); l != "" {
		ev = append(ev, l)
	}
	if len(pf.OOMKilled) > 0 {
		ev = append(ev, fmt.Sprintf("the kernel OOM-killed %s, its process, in the analysed scope during an episode it is credited with: it ran into the memory limit itself (see OOM KILLS)",
			strings.Join(pf.OOMKilled, ", ")))
	}
	if pf.FiringsUsed {
		ev = append(ev, fmt.Sprintf("%d of %d firings in the recording were followed within %s by an episode", c.FiringsMatched, c.Firings, correlate.FormatDuration(c.Lag)))
		if c.FiringsMatched > 0 {
			ev = append(ev, fmt.Sprintf("with episodes at random times, %d of %d firings would be followed by one with p = %.2g", c.FiringsMatched, c.Firings, pf.PFiring))
		}
		if l := cutOffLine(r, c, pf); l != "" {
			ev = append(ev, l)
		}
	} else if note := firingsNote(pf.FiringsUnused, job); c.Projected && note != "" {
		ev = append(ev, "firings not weighed: "+note)
	}
	if pf.ProcessesRecorded {
		ev = append(ev, fmt.Sprintf("null model: outside episodes its processes were as busy in %d of %d intervals (presence %.2g); a random episode meets that with probability %.2g, and %d of %d episodes by chance with p = %.2g",
			pf.PresentIntervals, pf.OutsideIntervals, pf.Presence, pf.EpisodeChance, len(pf.Credits), n, pf.PNull))
	} else {
		ev = append(ev, "the recording has no per-process data: that it ran is inferred from its schedule only")
	}
	if len(pf.FiresWith) > 0 {
		rank := "each is ranked by its own I/O"
		switch {
		case len(c.UndecidedWith) > 0:
			rank = undecidedRule(c.Why) + ": correlation does not rank them"
		case !slices.ContainsFunc(pf.FiresWith, func(n string) bool { return culpritByName(r, n) != nil }):
			rank = "it alone is named (Not named, below, says why the others are not)"
			if len(pf.FiresWith) == 1 {
				rank = "it alone is named (Not named, below, says why the other is not)"
			}
		}
		ev = append(ev, fmt.Sprintf("may share a wake-up with %s (their AccuracySec= windows overlap, so systemd may start them together): %s; RandomizedDelaySec= on these timers would spread them apart",
			strings.Join(pf.FiresWith, ", "), rank))
	}
	if pf.Late {
		ev = append(ev, "its processes started after the stall had begun in every credited episode")
	}
	if job.Source == timers.Systemd && !job.Active {
		ev = append(ev, "the timer is not enabled (nothing pulls it in), yet its processes ran in the episodes: started by hand or by another unit?")
	}
	return ev
}

// leadOf is when a culprit's processes started, by the median of its
// credits' LeadS: ", starting with the stall (…)"; "" when unknown.
func leadOf(r *correlate.Result, pf *correlate.Proof) string {
	var leads []float64
	for _, cr := range pf.Credits {
		if cr.LeadS != nil {
			leads = append(leads, *cr.LeadS)
		}
	}
	if len(leads) == 0 {
		return ""
	}
	l := correlate.Median(leads)
	iv := r.Interval.Seconds()
	switch {
	case l <= iv && l >= -iv:
		return ", starting with the stall (within one sampling interval, median)"
	case l >= 0:
		return fmt.Sprintf(", starting %s before the stall (median)", correlate.FormatDuration(time.Duration(l*float64(time.Second))))
	}
	return fmt.Sprintf(", starting %s after the stall began (median)", correlate.FormatDuration(time.Duration(-l*float64(time.Second))))
}

// sharedWith says which of a culprit's episodes other culprits are
// credited with too (Proof.SharedWith): "2 of them are also credited to
// X (…)"; "" when none.
func sharedWith(r *correlate.Result, c *correlate.Culprit) string {
	if c.Proof == nil || len(c.Proof.SharedWith) == 0 {
		return ""
	}
	shared := map[int]bool{}
	for _, o := range r.Culprits {
		if o.Name == c.Name || !slices.Contains(c.Proof.SharedWith, o.Name) {
			continue
		}
		for _, e := range o.Episodes {
			if slices.Contains(c.Episodes, e) {
				shared[e] = true
			}
		}
	}
	if len(shared) == 0 {
		return ""
	}
	return fmt.Sprintf("%d of them are also credited to %s: both did their share of those episodes' I/O, and each counts them, with its own share",
		len(shared), strings.Join(c.Proof.SharedWith, ", "))
}

// memTake is what a culprit credited for the memory it took
// (memCredit) took: the median of its credits' MemBytes and MemShare,
// and the median of their I/O shares.
type memTake struct {
	bytes            uint64
	share, ioShare   float64
	outside, credits uint64
}

// memCredit says whether a culprit was credited for the memory it took
// rather than for its I/O: its median memory share (EpisodeCredit.MemShare)
// is above its median I/O share (EpisodeCredit.Share), so Proof.Share,
// the median of the larger of the two, is its memory's.
func memCredit(pf *correlate.Proof) (memTake, bool) {
	var mb, ms, io []float64
	var m memTake
	for _, cr := range pf.Credits {
		mb = append(mb, float64(cr.MemBytes))
		ms = append(ms, cr.MemShare)
		io = append(io, cr.Share)
		m.outside += cr.MemOutside
	}
	if len(ms) == 0 {
		return m, false
	}
	m.bytes, m.share, m.ioShare = uint64(correlate.Median(mb)), correlate.Median(ms), correlate.Median(io)
	m.credits = uint64(len(ms))
	return m, m.share > m.ioShare
}

// memShareOf is a memory-credited culprit's median share of the memory
// taken in its episodes and over which processes (Proof.ShareScope).
func memShareOf(pf *correlate.Proof, m memTake) string {
	if pf.ShareScope != correlate.ScopeCgroup {
		return fmt.Sprintf("%.0f%% (median) of the memory all recorded processes took", 100*m.share)
	}
	of := fmt.Sprintf("%.0f%% (median) of the memory taken by the processes that can cause the cgroup's reclaim", 100*m.share)
	if m.outside > 0 {
		of += fmt.Sprintf(" (%s per episode taken by processes outside it left out)", correlate.FormatBytes(m.outside/m.credits))
	}
	return of
}

// shareOf is a culprit's median I/O share and over which I/O it is taken
// (Proof.ShareScope), with what a cgroup scope left out and what rests on
// processes whose cgroup was not recorded.
func shareOf(pf *correlate.Proof, share float64) string {
	judged := 0
	for _, cr := range pf.Credits {
		if cr.ChainJudged {
			judged++
		}
	}
	switch {
	case judged > 0 && judged == len(pf.Credits):
		return fmt.Sprintf("%.0f%% (median) of the victim's file pages reclaim took, on its account (the traced chain, not its share of the disk I/O)", 100*share)
	case judged > 0:
		return fmt.Sprintf("%.0f%% (median) of the victim's loss where the chain was traced (%d of %d credits), of the I/O elsewhere", 100*share, judged, len(pf.Credits))
	}
	if pf.ShareScope != correlate.ScopeCgroup {
		return fmt.Sprintf("%.0f%% of all recorded processes' I/O (median)", 100*share)
	}
	var out, unk uint64
	for _, cr := range pf.Credits {
		out += cr.OutsideBytes
		unk += cr.UnknownBytes
	}
	of := fmt.Sprintf("%.0f%% (median) of the I/O of the processes that can cause the cgroup's reclaim (in it, below it or in a non-root ancestor", 100*share)
	if k := uint64(len(pf.Credits)); out > 0 {
		of += fmt.Sprintf("; %s per episode by processes outside it left out", correlate.FormatBytes(out/k))
	}
	if unk > 0 {
		of += fmt.Sprintf("; %s of its own by processes whose cgroup was not recorded", correlate.FormatBytes(unk))
	}
	return of + ")"
}

func processEvidence(r *correlate.Result, c *correlate.Culprit, pf *correlate.Proof) []string {
	var ev []string
	k := len(pf.Credits)
	var best correlate.ProcActivity
	if len(c.Processes) > 0 {
		best = c.Processes[0]
	}
	if c.NewEachTime {
		starter := "no timer or cron job starts it: a script, a loop or a service starts it on a schedule"
		if len(best.StartedBy) > 0 {
			starter = "no timer or cron job starts it; recorded ancestors: " + strings.Join(best.StartedBy, " ← ")
		}
		ev = append(ev, fmt.Sprintf("recurs every %s, %s, a new %s process each time (%d PIDs) and %s",
			correlate.FormatDuration(c.Period), didEach(best, pf.Credits, k), c.Name, c.Runs, starter))
	} else {
		ev = append(ev, fmt.Sprintf("recurs every %s, %s, no timer or cron job: an in-process schedule?",
			correlate.FormatDuration(c.Period), didEach(best, pf.Credits, k)))
	}
	if l := chainEvidence(r, pf); l != "" {
		ev = append(ev, l)
	}
	if sp := pf.StartsPeriod; sp != nil {
		ev = append(ev, fmt.Sprintf("its runs started every %s (±%s) by the recorded exec events: %d of %d starts on the schedule",
			correlate.FormatDuration(sp.Period), correlate.FormatDuration(time.Duration(sp.JitterS*float64(time.Second))), sp.Matched, len(pf.Starts)))
	}
	if l := recurrence(r); l != "" {
		ev = append(ev, l)
	}
	if len(pf.SharedWith) > 0 {
		// Named beside a job (correlate's sharedPatterns): its credits,
		// as a job's, and the episodes it shares.
		ev = append(ev, fmt.Sprintf("credited with %d of %d episodes: its processes did %s per episode, %s%s",
			k, c.EpisodesTotal, correlate.FormatBytes(c.BytesPerEpisode), shareOf(pf, pf.Share), leadOf(r, pf)))
		if l := sharedWith(r, c); l != "" {
			ev = append(ev, l)
		}
	}
	for _, p := range c.Programs {
		of := "of the recorded I/O (median)"
		if pf.ShareScope == correlate.ScopeCgroup {
			of = "(median) of the I/O of the processes that can cause the cgroup's reclaim"
		}
		ev = append(ev, fmt.Sprintf("%s did %.0f%% %s in %d of the %d recurring episodes no job explains, at least 3 times its rate outside episodes",
			p.Program, 100*p.Share, of, p.Episodes, p.Of))
	}
	var unk, own uint64
	for _, cr := range pf.Credits {
		unk += cr.UnknownBytes
		own += cr.Bytes
	}
	if pf.ShareScope == correlate.ScopeCgroup && unk > 0 {
		ev = append(ev, fmt.Sprintf("%s of its %s in the credited episodes was done by processes whose cgroup was not recorded: counted, as they may be in the cgroup",
			correlate.FormatBytes(unk), correlate.FormatBytes(own)))
	}
	ev = append(ev, fmt.Sprintf("null model: outside episodes it was as busy in %d of %d intervals (presence %.2g); %d of %d episodes by chance with p = %.2g",
		pf.PresentIntervals, pf.OutsideIntervals, pf.Presence, k, c.EpisodesTotal, pf.PNull))
	return ev
}

// firingsNote says why a job's firings were not weighed ("" when they
// were): JSON's proof.firings_note.
func firingsNote(u correlate.Unused, job *timers.Job) string {
	switch u {
	case correlate.UnusedNotProjected:
		return "its schedule was not projected over the recording"
	case correlate.UnusedIdleNow:
		note := "the recording says it could not fire then"
		if job != nil && job.LiveNote != "" {
			note += " (" + job.LiveNote + ")"
		}
		return note
	case correlate.UnusedUnpredictable:
		d := time.Duration(0)
		if job != nil {
			d = job.RandomizedDelaySec
		}
		return fmt.Sprintf("RandomizedDelaySec=%s is at least half its period: its firing times are unpredictable, so it is matched by process evidence only", correlate.FormatDuration(d))
	case correlate.UnusedNoneInRecording:
		return "no firing fell within the recording"
	case correlate.UnusedNoJob:
		return "no timer or cron job runs it"
	}
	return ""
}

// notRunReason says why a job of the recording's inventory is not named
// (correlate.NotRun.Kind): JSON's not_run[].reason and the text's "Not
// named" line. A job that cannot run here (timers.Runs false: not pulled
// in from the boot target, cron not the scheduler, a guard that makes it
// do nothing, systemd or cron not running when the recording began) says
// so with the reason `memdiag timers --all` gives, never "scheduled but
// did not run": not running is what it does.
func notRunReason(nr correlate.NotRun) string {
	if o := nr.OutsideScope; o != nil {
		return ranOutsideReason(o)
	}
	if u := nr.Ran; u != nil {
		return ranUnnamedReason(nr.Kind, u)
	}
	runs, why := true, ""
	if j := nr.Job; j != nil {
		runs, why = timers.Runs(j)
	}
	switch {
	case nr.Kind == correlate.NotRunOtherCgroup:
		// Jobs of one slice share the reason, and so a line.
		return fmt.Sprintf("cannot run in the analysed cgroup: its unit runs under %s (its Slice=), not in %s or a cgroup that contains it",
			path.Dir(nr.Cgroup), nr.Group)
	case !runs:
		return "cannot run here: " + why
	case nr.Kind == correlate.NotRunDidNot:
		return "did not run: no process of it was recorded, and no firing of it fell near an episode"
	case nr.Kind == correlate.NotRunUnknown:
		s := "whether it ran is unknown (the recording has no per-process data), and its firings alone do not name it: "
		switch {
		case nr.FiringsUnused != "":
			return s + firingsNote(nr.FiringsUnused, nr.Job)
		case nr.Firings == 0:
			return s + "no firing fell within the recording"
		}
		return s + fmt.Sprintf("%d of its %d firings in the recording were followed by an episode", nr.Matched, nr.Firings)
	case nr.FiringsNear > 0:
		return fmt.Sprintf("scheduled but did not run: %d of its firings fell near episodes, but no process of it was recorded", nr.FiringsNear)
	}
	return "scheduled but did not run: " + firingsNote(nr.FiringsUnused, nr.Job)
}

// ranUnnamedReason says what a job that ran in the scope did in the
// episodes, and which rule it did not meet (docs/analyze.md, "Credit"
// and "Naming").
func ranUnnamedReason(k correlate.NotNamedKind, u *correlate.RanUnnamed) string {
	floor, minShare := correlate.CreditBar()
	maxP, solo := correlate.NamingBar()
	procs := english.Count(u.Processes, "recorded process")
	switch k {
	case correlate.NotRunNoEpisodeIO:
		return fmt.Sprintf("ran (%s), but its processes did no I/O and took no memory in any of the %s", procs, english.Count(u.Of, "episode"))
	case correlate.NotRunChainRefuted:
		return fmt.Sprintf("ran (%s) and did enough I/O in %s to be credited by correlation, but the traced page-cache chain shows it cost the victim too little there: it added %s to the page cache the victim competes for, and reclaim took %s of the victim's pages on its account (a credit needs %s and %s of what the victim lost)",
			procs, english.Count(u.ChainRefuted, "episode"), correlate.FormatBytes(u.ChainAdded), correlate.FormatBytes(u.ChainCost), correlate.FormatBytes(floor), pct(minShare))
	case correlate.NotRunRodeAlong:
		return fmt.Sprintf("ran (%s) and fired with %s in %d of %d episodes, but was credited only with that wake-up: its own share of the I/O, %s (median), stays under the %s a credit needs alone, "+
			"and %s did more than twice its work (it did %s of that); without the traced page-cache chain nothing says it took any of the memory",
			procs, u.RodeWith, u.Credited, u.Of, pct(u.Share), pct(minShare), u.RodeWith, pct(u.WorkRatio))
	case correlate.NotRunBelowCredit:
		return fmt.Sprintf("ran (%s), but did too little in the episodes to be credited with one: at most %s of I/O and %s of an episode's I/O in any one (it did I/O in %d of %d episodes); a credit needs %s and %s",
			procs, correlate.FormatBytes(u.MaxBytes), smallPct(u.MaxShare), u.Episodes, u.Of, correlate.FormatBytes(floor), pct(minShare))
	}
	lead, after := "", ""
	if u.Lead != nil && *u.Lead < 0 {
		after = correlate.FormatDuration(time.Duration(-*u.Lead * float64(time.Second)))
		lead = ", starting " + after + " after the stall began"
	}
	if u.Credited == 1 {
		s := fmt.Sprintf("ran and was credited with 1 of %d episodes (%s of its I/O%s), but one episode names a job only when it did at least %s and started no later than the stall",
			u.Of, pct(u.Share), lead, pct(solo))
		return s
	}
	s := fmt.Sprintf("ran and was credited with %d of %d episodes, but chance is not ruled out (p = %.2g; a job is named below %.2g)", u.Credited, u.Of, u.P, maxP)
	if u.Late {
		if after != "" {
			return s + " and it started " + after + " after the stall began (median)"
		}
		return s + " and it started after the stall began"
	}
	return s + fmt.Sprintf(", and its median share, %s, is below the %s that names a job in a recording too short to rule out chance", pct(u.Share), pct(solo))
}

// ranOutsideReason says that a job ran, but only outside the --cgroup
// group analysed: "ran, but outside the analysed cgroup: its 9 processes
// ran in /system.slice/tenant.service, not in /sys/fs/cgroup/memory/app
// or a cgroup that contains it; they did 3.5 GiB of I/O in 9 of the
// group's episodes, which a process outside the group cannot turn into
// reclaim at the group's limit: not credited with them".
func ranOutsideReason(o *correlate.RanOutside) string {
	where := strings.Join(o.Cgroups, ", ")
	if len(o.Cgroups) > 3 {
		where = strings.Join(o.Cgroups[:3], ", ") + fmt.Sprintf(" and %d more", len(o.Cgroups)-3)
	}
	s := fmt.Sprintf("ran, but outside the analysed cgroup: its %s ran in %s, not in %s or a cgroup that contains it; ",
		english.Count(o.Processes, "recorded process"), where, o.Group)
	they := "they"
	if o.Processes == 1 {
		they = "it"
	}
	if o.Episodes == 0 {
		return s + they + " did no I/O in the group's episodes"
	}
	return s + fmt.Sprintf(they+" did %s of I/O in %d of the group's episodes, which a process outside the group cannot turn into reclaim at the group's limit (only host-wide reclaim and disk contention): not credited with them",
		correlate.FormatBytes(o.Bytes), o.Episodes)
}

// tieSummary says how processes were tied: "pmlogger_check 1001 (unit
// pmlogger_check.service), pressure.py 4200 (started by periodic.sh 4100,
// the job's)".
func tieSummary(ts []correlate.Tie) string {
	seen := map[string]bool{}
	var parts []string
	for _, t := range ts {
		var s string
		switch t.How {
		case correlate.TieUnit:
			s = fmt.Sprintf("%s (unit %s)", t.Program, t.Via)
		case correlate.TieAncestry:
			s = fmt.Sprintf("%s (started by %s, the job's)", t.Program, t.Via)
		default:
			s = fmt.Sprintf("%s (a program of the job's command)", t.Program)
		}
		if !seen[s] {
			seen[s] = true
			parts = append(parts, s)
		}
	}
	if len(parts) > 5 {
		parts = append(parts[:5], fmt.Sprintf("%d more", len(parts)-5))
	}
	return strings.Join(parts, ", ")
}

// procName names a process by what it runs, its comm when the command
// line was not recorded.
func procName(p correlate.ProcActivity) string {
	if p.Program != "" {
		return p.Program
	}
	return p.Comm
}

// didEach says what a process did per episode: "postgres
// (postgresql.service) wrote 1.2 GiB each time".
// didEach is what the pattern's process did per episode: the median of
// its credited episodes' bytes (a run cut by the recording's end does not
// pull it down, as a mean would), split by its reads and writes; the mean
// over eps episodes when nothing was credited.
func didEach(p correlate.ProcActivity, credits []correlate.EpisodeCredit, eps int) string {
	who := procName(p)
	if p.Unit != "" {
		who += " (" + p.Unit + ")"
	}
	verb, part := "wrote", p.WriteBytes
	if p.ReadBytes > p.WriteBytes {
		verb, part = "read", p.ReadBytes
	}
	if len(credits) == 0 || p.Bytes() == 0 {
		return fmt.Sprintf("%s %s %s each time", who, verb, correlate.FormatBytes(part/uint64(max(eps, 1))))
	}
	bs := make([]uint64, len(credits))
	for i, c := range credits {
		bs[i] = c.Bytes
	}
	slices.Sort(bs)
	med := bs[len(bs)/2]
	if len(bs)%2 == 0 {
		med = bs[len(bs)/2-1]/2 + bs[len(bs)/2]/2
	}
	per := uint64(float64(med) * float64(part) / float64(p.Bytes()))
	return fmt.Sprintf("%s %s %s per episode (median)", who, verb, correlate.FormatBytes(per))
}

func jobFile(j *timers.Job) string {
	if j.Line > 0 {
		return fmt.Sprintf("%s:%d", absPath(j.File), j.Line)
	}
	if j.File == "" {
		return "(unknown file)"
	}
	return absPath(j.File)
}

// absPath gives a job's file as the user finds it on the host: the
// inventory keeps it relative to the root it read (etc/cron.d/x), the
// user reads /etc/cron.d/x.
func absPath(p string) string {
	if p == "" || strings.HasPrefix(p, "/") {
		return p
	}
	return "/" + p
}

// unseenIO says why the recording cannot show who did an unknown
// culprit's I/O ("" when it could): no per-process data, or most
// processes' /proc/PID/io unreadable.
func unseenIO(c *correlate.Culprit) string {
	for _, m := range c.Missing {
		switch m {
		case correlate.MissingProcesses:
			return "the recording has no per-process I/O (recorded without root)"
		case correlate.MissingIOAccess:
			return "per-process I/O was unreadable for most processes (/proc/PID/io denied: recorded without root)"
		}
	}
	return ""
}

// smallPct is pct, "under 1%" for a share above 0 that pct would call 0%.
func smallPct(share float64) string {
	if share > 0 && share < 0.005 {
		return "under 1%"
	}
	return pct(share)
}

// victimWaitsText states the victim process's own waits on memory in an
// episode, from its delay accounting: "its process (pid 4242) waited
// 1.3 s in reclaim, 0.4 s on thrashing (delay accounting)"; "" when not
// recorded or nothing was waited.
func victimWaitsText(w *correlate.VictimWaits) string {
	if w == nil || w.MemoryS() <= 0 {
		return ""
	}
	var parts []string
	for _, p := range []struct {
		s    float64
		what string
	}{{w.ReclaimS, "in reclaim"}, {w.ThrashingS, "on thrashing (refaults)"}, {w.SwapinS, "on swap-in"}, {w.CompactS, "in compaction"}} {
		if p.s > 0 {
			parts = append(parts, correlate.FormatDuration(time.Duration(p.s*float64(time.Second)))+" "+p.what)
		}
	}
	return fmt.Sprintf("the victim's process (pid %d) waited %s (delay accounting)", w.PID, strings.Join(parts, ", "))
}

// chainEvidence states the traced chain of the credit that cost the
// victim most: "traced chain, episode 3: it added 512 MiB to the page
// cache from 12:00:01 to 12:00:09; reclaim took 80 MiB of
// web.service's file pages in those seconds, 64 MiB of them by its own
// reclaim; web.service's tasks spent 1.2 s in reclaim and refaulted
// 48 MiB; the p99 rose to 820 ms (the chain judged 6 of its 6
// credits)"; "" when no credit was judged by the chain.
func chainEvidence(r *correlate.Result, pf *correlate.Proof) string {
	var best *correlate.EpisodeCredit
	judged := 0
	for i := range pf.Credits {
		cr := &pf.Credits[i]
		if !cr.ChainJudged || cr.Chain == nil {
			continue
		}
		judged++
		if best == nil || cr.Chain.CostBytes > best.Chain.CostBytes {
			best = cr
		}
	}
	if best == nil || best.Episode >= len(r.Episodes) || r.Episodes[best.Episode].Chain == nil {
		return ""
	}
	e := &r.Episodes[best.Episode]
	ce, cc := e.Chain, best.Chain
	who := "every group"
	if ce.Victim != "" {
		who = path.Base(ce.Victim)
	}
	clock := func(t time.Time) string {
		if r.Location != nil {
			t = t.In(r.Location)
		}
		return t.Format("15:04:05")
	}
	s := fmt.Sprintf("traced chain, episode %d: it added %s to the page cache", e.Index+1, correlate.FormatBytes(cc.AddedBytes))
	if cc.AddedBytes > 0 {
		s += fmt.Sprintf(" from %s to %s", clock(cc.AddedFrom), clock(cc.AddedTo))
	}
	s += fmt.Sprintf("; reclaim took %s of %s's file pages in those seconds", correlate.FormatBytes(ce.EvictedBytes), who)
	if cc.TookBytes > 0 {
		s += fmt.Sprintf(", %s of them by its own reclaim", correlate.FormatBytes(cc.TookBytes))
	}
	switch {
	case ce.PooledBytes > 0 && cc.AddedBytes < ce.AddedBytes && ce.HeldBytes > 0:
		// Others added cache beside it, some under a limit of their own.
		s += fmt.Sprintf(" (%s of the loss is on its account: reclaim run by those adding cache is shared by what each added, at most its own memory limit for a group that has one: it can hold no more)", pct(cc.CostShare))
	case ce.PooledBytes > 0 && cc.AddedBytes < ce.AddedBytes:
		// Others added cache beside it: who ran reclaim was timing.
		s += fmt.Sprintf(" (%s of the loss is on its account: reclaim run by those adding cache is shared by what each added)", pct(cc.CostShare))
	default:
		s += fmt.Sprintf(" (%s of the loss is on its account)", pct(cc.CostShare))
	}
	stall := correlate.FormatDuration(time.Duration(ce.StallS * float64(time.Second)))
	switch {
	case ce.RefaultsUntraced:
		s += fmt.Sprintf("; %s's tasks spent %s in reclaim (its refaults were not traced: this kernel refused the program)", who, stall)
	case ce.StallS > 0 || ce.RefaultBytes > 0:
		s += fmt.Sprintf("; %s's tasks spent %s in reclaim and refaulted %s", who, stall, correlate.FormatBytes(ce.RefaultBytes))
	}
	if w := victimWaitsText(e.VictimWaits); w != "" {
		s += "; " + w
	}
	if e.LatencyPeak > 0 {
		s += fmt.Sprintf("; the %s rose to %s", r.Stat, correlate.FormatDuration(e.LatencyPeak))
	}
	return s + fmt.Sprintf(" (the chain judged %d of its %s)", judged, english.Count(len(pf.Credits), "credit"))
}

// cutOffLine says which of a job's firings were not counted because the
// recording ended within their window (Proof.FiringsCutOff), "" for none.
func cutOffLine(r *correlate.Result, c *correlate.Culprit, pf *correlate.Proof) string {
	n := len(pf.FiringsCutOff)
	if n == 0 {
		return ""
	}
	at := make([]string, n)
	for i, f := range pf.FiringsCutOff {
		if r.Location != nil {
			f = f.In(r.Location)
		}
		at[i] = f.Format("15:04:05")
	}
	return fmt.Sprintf("not counted: its %s at %s, which the recording ended less than %s after (an episode it caused may have begun after the end)",
		english.Plural(n, "firing"), english.List(at, "and"), correlate.FormatDuration(c.Lag))
}
