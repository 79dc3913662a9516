package correlate

import (
	"cmp"
	"fmt"
	"math"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/memdiag/memdiag/timers"
)

// Naming rules (see the package documentation).
const (
	minFiringShare = 0.5 // of a job's firings followed by an episode
	minMatched     = 2   // firings followed by an episode
	minProcShare   = 0.3 // of episodes with the job's process
	minProcEps     = 2
	maxChance      = 0.01 // p-value of the episodes explained by chance
)

// binomialTail is P(X ≥ k) for X ~ Binomial(n, p).
func binomialTail(n, k int, p float64) float64 {
	if k <= 0 {
		return 1
	}
	if p <= 0 {
		return 0
	}
	if p >= 1 {
		return 1
	}
	sum := 0.0
	for i := k; i <= n; i++ {
		lg := lgamma(n+1) - lgamma(i+1) - lgamma(n-i+1)
		sum += math.Exp(lg + float64(i)*math.Log(p) + float64(n-i)*math.Log1p(-p))
	}
	return math.Min(1, sum)
}

func lgamma(x int) float64 {
	v, _ := math.Lgamma(float64(x))
	return v
}

// rankCulprits fills res.Culprits and Episode.Culprit.
func rankCulprits(res *Result, sr *Series, o Options) {
	h := &sr.Header
	n := len(res.Episodes)
	if n == 0 {
		return
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
	var cs []Culprit
	closest := closestFirings(res, h.Jobs, firings, o)
	for i := range h.Jobs {
		if c := evalJob(res, sr, &h.Jobs[i], firings[h.Jobs[i].Name], closest, projected, o); c != nil {
			cs = append(cs, *c)
		}
	}
	if c := recurringUnexplained(res, sr, cs); c != nil {
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

// jobPeriod is the job's typical period: PeriodSeconds, else the median gap
// between its planned firings; 0 if unknown.
func jobPeriod(j *timers.Job, fs []timers.Firing) time.Duration {
	if j.PeriodSeconds != nil && *j.PeriodSeconds > 0 {
		return secs(*j.PeriodSeconds)
	}
	if len(fs) < 2 {
		return 0
	}
	gaps := make([]float64, 0, len(fs)-1)
	for i := 1; i < len(fs); i++ {
		gaps = append(gaps, float64(fs[i].Planned.Sub(fs[i-1].Planned)))
	}
	return time.Duration(median(gaps))
}

// window is the span in which an episode caused by a firing may start.
type window struct {
	earliest time.Time // the firing's Earliest
	from, to time.Time
	inRec    bool // the firing lies within the recording, so it counts
}

// jobWindows returns the job's period, lag and firing windows:
// [Earliest − one interval, Latest + lag], Latest clamped to a quarter of
// the period after Earliest (a wide AccuracySec on a fast timer would
// otherwise cover everything).
func jobWindows(res *Result, job *timers.Job, fs []timers.Firing, o Options) (time.Duration, time.Duration, []window) {
	slices.SortFunc(fs, func(a, b timers.Firing) int { return a.Planned.Compare(b.Planned) })
	period := jobPeriod(job, fs)
	lag := o.LagTolerance
	if period > 0 && lag > period/4 {
		lag = period / 4
	}
	slack := res.Interval
	ws := make([]window, 0, len(fs))
	for _, f := range fs {
		latest := f.Latest
		if period > 0 && latest.Sub(f.Earliest) > period/4 {
			latest = f.Earliest.Add(period / 4)
		}
		ws = append(ws, window{earliest: f.Earliest, from: f.Earliest.Add(-slack), to: latest.Add(lag),
			inRec: !f.Earliest.Before(res.Start) && !f.Earliest.After(res.End.Add(-slack))})
	}
	return period, lag, ws
}

// closestFirings returns, per episode, the shortest delay from a firing
// of any job whose window holds the episode's start (MaxInt64 if none): an
// episode is credited only to the job(s) that fired closest before it, so
// a decoy firing just before another job's episode does not claim it.
func closestFirings(res *Result, jobs []timers.Job, firings map[string][]timers.Firing, o Options) []time.Duration {
	best := make([]time.Duration, len(res.Episodes))
	for i := range best {
		best[i] = math.MaxInt64
	}
	for j := range jobs {
		_, _, ws := jobWindows(res, &jobs[j], firings[jobs[j].Name], o)
		for _, w := range ws {
			for i := range res.Episodes {
				if s := res.Episodes[i].Start; !s.Before(w.from) && !s.After(w.to) {
					best[i] = min(best[i], absDur(s.Sub(w.earliest)))
				}
			}
		}
	}
	return best
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// evalJob decides whether job explains episodes, and with what evidence.
func evalJob(res *Result, sr *Series, job *timers.Job, fs []timers.Firing, closest []time.Duration, projected bool, o Options) *Culprit {
	n := len(res.Episodes)
	period, lag, ws := jobWindows(res, job, fs, o)
	slack := res.Interval

	// (a) firings.
	fireEps := map[int]bool{}
	counted, matched := 0, 0
	var windowSum time.Duration
	var reach time.Duration // latest start of a matched episode, from its window's start
	for _, w := range ws {
		hit := false
		for i := range res.Episodes {
			s := res.Episodes[i].Start
			if !s.Before(w.from) && !s.After(w.to) && absDur(s.Sub(w.earliest)) <= closest[i]+slack {
				fireEps[i], hit = true, true
				if w.inRec {
					reach = max(reach, s.Sub(w.from))
				}
			}
		}
		if !w.inRec {
			continue
		}
		counted++
		if hit {
			matched++
		}
		windowSum += w.to.Sub(w.from)
	}
	span := res.End.Sub(res.Start)
	// How likely would this many of the job's firings be followed by an
	// episode if the episodes fell at random times? A window of width w
	// holds one of n random episode starts with probability
	// q = 1 − (1 − w/span)^n; the count of matched firings is then
	// binomial. w is the part of the window the matched episodes used
	// (their latest start plus one interval), not the whole allowance: five
	// episodes each starting within a second of a firing say more than
	// five anywhere in 11 s windows.
	q := 0.0
	if counted > 0 && span > 0 {
		w := float64(windowSum) / float64(counted)
		if matched > 0 {
			w = math.Min(w, float64(reach+slack))
		}
		q = 1 - math.Pow(1-math.Min(1, w/float64(span)), float64(n))
	}
	pChance := binomialTail(counted, matched, q)
	fireOK := counted >= minMatched && matched >= minMatched &&
		float64(matched) >= minFiringShare*float64(counted) &&
		len(fireEps) >= minMatched && pChance < maxChance

	// (b) processes tied to the job.
	procEps := map[int]bool{}
	type agg struct {
		ProcActivity
		eps map[int]bool
	}
	procs := map[string]*agg{}
	for i := range res.Episodes {
		e := &res.Episodes[i]
		seen := map[int]bool{}
		for _, list := range [][]ProcActivity{e.Processes, e.Started} {
			for _, p := range list {
				if seen[p.PID] || !jobOwnsProc(job, p) {
					continue
				}
				seen[p.PID] = true
				procEps[i] = true
				key := p.Comm
				a := procs[key]
				if a == nil {
					a = &agg{ProcActivity: ProcActivity{Comm: p.Comm, Unit: p.Unit, Cmdline: p.Cmdline}, eps: map[int]bool{}}
					procs[key] = a
				}
				a.ReadBytes += p.ReadBytes
				a.WriteBytes += p.WriteBytes
				a.eps[i] = true
			}
		}
	}
	// Its processes must have done I/O in the episodes, at least three
	// times their rate outside them, or a job that runs all the time (a
	// cron line every minute) would be in every episode.
	specificIO := false
	for comm, a := range procs {
		if a.Bytes() > 0 && specific(res, sr, comm) {
			specificIO = true
		}
	}
	procOK := len(procEps) >= minProcEps && float64(len(procEps)) >= minProcShare*float64(n) && specificIO
	// A job nothing enables does not fire: its projected firings are only
	// a schedule on paper, so they need its process in an episode too.
	paperOnly := fireOK && !job.Active && len(procEps) == 0
	if paperOnly {
		fireOK = false
	}
	if !fireOK && !procOK {
		return nil
	}

	c := &Culprit{Name: job.Name, Kind: KindCron, Job: job, EpisodesTotal: n, Period: period,
		Firings: counted, FiringsMatched: matched}
	if job.Source == timers.Systemd {
		c.Kind = KindTimer
	}
	explained := map[int]bool{}
	if fireOK {
		for i := range fireEps {
			explained[i] = true
		}
	}
	for i := range procEps {
		explained[i] = true
	}
	for i := range explained {
		c.Episodes = append(c.Episodes, i)
	}
	slices.Sort(c.Episodes)
	c.EpisodesExplained = len(c.Episodes)

	var total uint64
	for _, a := range procs {
		c.Processes = append(c.Processes, a.ProcActivity)
		total += a.Bytes()
	}
	slices.SortFunc(c.Processes, func(a, b ProcActivity) int {
		if x := cmp.Compare(b.Bytes(), a.Bytes()); x != 0 {
			return x
		}
		return cmp.Compare(a.Comm, b.Comm)
	})
	if len(procEps) > 0 {
		c.BytesPerEpisode = total / uint64(len(procEps))
	}

	// Evidence and confidence.
	sched := strings.Join(job.Schedule, ", ")
	if sched == "" {
		sched = "no calendar schedule"
	}
	every := ""
	if period > 0 {
		every = "every " + FormatDuration(period) + " "
	}
	c.Evidence = append(c.Evidence, fmt.Sprintf("%s job, fires %s(%s), defined in %s", job.Source, every, sched, jobFile(job)))
	if projected {
		if counted > 0 {
			c.Evidence = append(c.Evidence, fmt.Sprintf("%d of %d firings in the recording were followed within %s by an episode",
				matched, counted, FormatDuration(lag)))
		} else {
			c.Evidence = append(c.Evidence, "no firing fell within the recording")
		}
		if fireOK {
			c.Evidence = append(c.Evidence, fmt.Sprintf("its firings explain %d of %d episodes (%.0f%%); with episodes at random times a firing would be followed by one with probability %.2f, and %d of %d by chance with p = %.2g",
				len(fireEps), n, 100*float64(len(fireEps))/float64(n), q, matched, counted, pChance))
		}
	}
	if !job.Active {
		c.Evidence = append(c.Evidence, "the job is not enabled (nothing pulls its timer in), yet its processes ran in the episodes: started by hand or by another unit?")
	}
	if len(procEps) > 0 {
		names := make([]string, 0, len(c.Processes))
		for _, p := range c.Processes {
			names = append(names, p.Comm)
		}
		owner := job.Unit
		if owner == "" {
			owner = strings.Join(names, ", ")
		}
		c.Evidence = append(c.Evidence, fmt.Sprintf("%s ran in %d of %d episodes (%s), doing %s of I/O (%s read, %s written), %s per episode",
			owner, len(procEps), n, strings.Join(names, ", "), FormatBytes(total), FormatBytes(sumRead(c.Processes)),
			FormatBytes(sumWrite(c.Processes)), FormatBytes(c.BytesPerEpisode)))
	} else {
		c.Evidence = append(c.Evidence, "none of its processes was recorded in the episodes (per-process I/O may not have been collected)")
	}

	if fireOK {
		// Firing share, discounted unless chance is ruled out (p ≤ 1e-4).
		conf := float64(matched) / float64(counted) * min(1, -math.Log10(max(pChance, 1e-12))/4)
		if 2*len(procEps) >= len(fireEps) && len(procEps) > 0 {
			conf += (1 - conf) * 0.5
		}
		if matched < 3 {
			conf *= 0.8
		}
		c.Confidence = conf
	} else {
		c.Confidence = 0.4 + 0.4*float64(len(procEps))/float64(n)
		// Without firings, the recurrence of its process's episodes at the
		// job's own period is the next best evidence.
		if period > 0 && len(procEps) >= periodMinHits {
			var ts []time.Time
			for i := range procEps {
				ts = append(ts, res.Episodes[i].Start)
			}
			slices.SortFunc(ts, time.Time.Compare)
			if p := EstimatePeriod(ts, res.Start, res.End, 4*res.Interval); p != nil &&
				math.Abs(float64(p.Period-period)) <= 0.1*float64(period) {
				c.Evidence = append(c.Evidence, fmt.Sprintf("those episodes recur every %s, the job's period", FormatDuration(p.Period)))
				c.Confidence += 0.2
			}
		}
	}
	c.Confidence = math.Round(c.Confidence*100) / 100
	return c
}

func jobFile(j *timers.Job) string {
	if j.Line > 0 {
		return fmt.Sprintf("%s:%d", j.File, j.Line)
	}
	if j.File == "" {
		return "(unknown file)"
	}
	return j.File
}

func sumRead(ps []ProcActivity) (n uint64) {
	for _, p := range ps {
		n += p.ReadBytes
	}
	return n
}

func sumWrite(ps []ProcActivity) (n uint64) {
	for _, p := range ps {
		n += p.WriteBytes
	}
	return n
}

// JobUnits are the systemd units whose processes belong to job: Job.Unit
// and, for "x.timer", "x.service".
func JobUnits(j *timers.Job) []string {
	var us []string
	if j.Unit != "" {
		us = append(us, j.Unit)
	}
	if base, ok := strings.CutSuffix(j.Name, ".timer"); ok && j.Source == timers.Systemd {
		if s := base + ".service"; s != j.Unit {
			us = append(us, s)
		}
	}
	return us
}

// genericCommands never identify a job by themselves.
var genericCommands = map[string]bool{
	"sh": true, "bash": true, "dash": true, "test": true, "[": true, "[[": true, "run-parts": true,
	"nice": true, "ionice": true, "flock": true, "timeout": true, "env": true, "if": true, "then": true,
	"else": true, "fi": true, "true": true, "false": true, "exit": true, "cd": true, "exec": true,
	"sudo": true, "su": true, "chronic": true, "systemd-cat": true, "logger": true, "echo": true,
	// Interpreters run many programs; the script's path identifies the job.
	"python": true, "python3": true, "perl": true, "ruby": true, "node": true, "php": true, "java": true,
}

// JobExecutables are the program names a job's command runs, as the
// kernel's 15-character comm would show them.
func JobExecutables(j *timers.Job) []string {
	seen := map[string]bool{}
	var out []string
	add := func(word string) {
		word = strings.Trim(word, `"'`)
		word = strings.TrimLeft(word, "-@+!:") // systemd ExecStart prefixes
		if word == "" || strings.Contains(word, "=") {
			return
		}
		b := path.Base(word)
		if genericCommands[b] || b == "." || b == "/" {
			return
		}
		if len(b) > 15 {
			b = b[:15]
		}
		if !seen[b] {
			seen[b] = true
			out = append(out, b)
		}
	}
	segs := strings.FieldsFunc(j.Command, func(r rune) bool { return strings.ContainsRune(";&|()", r) })
	for _, seg := range segs {
		words := strings.Fields(seg)
		firstDone := false
		for _, w := range words {
			switch {
			case strings.HasPrefix(w, "/"):
				add(w)
			case !firstDone && !strings.HasPrefix(w, "-") && !strings.Contains(w, "="):
				add(w)
			}
			if !strings.Contains(w, "=") && !genericCommands[path.Base(strings.TrimLeft(w, "-@+!:"))] {
				firstDone = true
			}
		}
	}
	for _, s := range j.Scripts {
		add(s)
	}
	return out
}

// jobOwnsProc reports whether p belongs to job: through its unit, or
// through its program name.
func jobOwnsProc(j *timers.Job, p ProcActivity) bool {
	if p.Unit != "" {
		for _, u := range JobUnits(j) {
			if p.Unit == u {
				return true
			}
		}
	}
	if p.Comm != "" && slices.Contains(JobExecutables(j), p.Comm) {
		return true
	}
	// The full path of a program the job runs, in the process's command
	// line ("sh /usr/libexec/pcp/bin/pmlogger_check -C").
	if p.Cmdline != "" {
		for _, w := range strings.Fields(j.Command) {
			w = strings.Trim(strings.TrimLeft(w, "-@+!:"), `"';&|()`)
			if strings.HasPrefix(w, "/") && strings.Count(w, "/") > 1 && !genericCommands[path.Base(w)] &&
				strings.Contains(p.Cmdline, w) {
				return true
			}
		}
	}
	return false
}

// recurringUnexplained reports a period whose episodes the named jobs do
// not explain, as the process that did their I/O or as unknown.
func recurringUnexplained(res *Result, sr *Series, named []Culprit) *Culprit {
	p := res.Period
	if p == nil {
		return nil
	}
	explained := map[int]bool{}
	for _, c := range named {
		for _, e := range c.Episodes {
			explained[e] = true
		}
	}
	var un []int
	for _, m := range p.Members {
		if !explained[m] {
			un = append(un, m)
		}
	}
	if len(un) < periodMinHits || 2*len(un) < len(p.Members) {
		return nil
	}
	// Processes in the unexplained recurring episodes, by program name.
	type agg struct {
		ProcActivity
		eps  map[int]bool
		pids map[int]bool
	}
	procs := map[string]*agg{}
	for _, i := range un {
		e := &res.Episodes[i]
		seen := map[int]bool{}
		for _, list := range [][]ProcActivity{e.Processes, e.Started} {
			for _, pr := range list {
				if seen[pr.PID] || pr.Comm == "" {
					continue
				}
				seen[pr.PID] = true
				a := procs[pr.Comm]
				if a == nil {
					a = &agg{ProcActivity: ProcActivity{Comm: pr.Comm, Unit: pr.Unit, Cmdline: pr.Cmdline}, eps: map[int]bool{}, pids: map[int]bool{}}
					procs[pr.Comm] = a
				}
				a.eps[i] = true
				a.pids[pr.PID] = true
				a.ReadBytes += pr.ReadBytes
				a.WriteBytes += pr.WriteBytes
			}
		}
	}
	// Only processes much busier in episodes than outside them count, so
	// the service that is always busy is never blamed.
	var cands []*agg
	for _, a := range procs {
		if len(a.eps) >= 2 && a.Bytes() > 0 && specific(res, sr, a.Comm) {
			cands = append(cands, a)
		}
	}
	slices.SortFunc(cands, func(a, b *agg) int {
		if c := cmp.Compare(len(b.eps), len(a.eps)); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Bytes(), a.Bytes()); c != 0 {
			return c
		}
		return cmp.Compare(a.Comm, b.Comm)
	})
	c := &Culprit{Kind: KindUnknown, Name: "unknown", EpisodesTotal: len(res.Episodes), Period: p.Period,
		Episodes: un, EpisodesExplained: len(un)}
	recur := fmt.Sprintf("recurs every %s (±%s): %d of %d episodes on the schedule, %d missed, %d off it",
		FormatDuration(p.Period), FormatDuration(p.Jitter), p.Matched, len(res.Episodes), p.Missed, p.Extra)
	covered := map[int]bool{}
	for _, a := range cands {
		for e := range a.eps {
			covered[e] = true
		}
	}
	if len(cands) > 0 && 2*len(covered) >= len(un) {
		best := cands[0]
		c.Kind, c.Name = KindProcess, best.Comm
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
		// One long-lived process doing this on a period has a schedule
		// inside, and so has a service that forks a worker each time
		// (postgres's autovacuum); a new process each time outside any
		// unit is started by something else: a script, a loop.
		c.NewEachTime = len(best.pids) >= len(best.eps) && best.Unit == ""
		if c.NewEachTime {
			c.Evidence = append(c.Evidence, fmt.Sprintf("recurs every %s, %s, a new %s process each time (%d PIDs) and no timer or cron job starts it: a script, a loop or a service starts it on a schedule",
				FormatDuration(p.Period), didEach(best.ProcActivity, len(best.eps)), best.Comm, len(best.pids)))
		} else {
			c.Evidence = append(c.Evidence, fmt.Sprintf("recurs every %s, %s, no timer or cron job: an in-process schedule?",
				FormatDuration(p.Period), didEach(best.ProcActivity, len(best.eps))))
		}
		c.Evidence = append(c.Evidence, recur)
		for _, a := range cands {
			c.Evidence = append(c.Evidence, fmt.Sprintf("%s did I/O in %d of the %d recurring episodes no job explains, at least 3 times its rate outside episodes",
				a.Comm, len(a.eps), len(un)))
		}
		c.Confidence = math.Round(p.Score*float64(len(covered))/float64(len(un))*0.8*100) / 100
		return c
	}
	c.Evidence = []string{recur, "no timer, cron job or process explains it"}
	c.Confidence = math.Round(p.Score*0.5*100) / 100
	return c
}

// specific reports whether the program comm did at least three times as
// much I/O per second inside episodes as outside them, so a process that is
// always busy (the service itself) is not blamed for the episodes.
func specific(res *Result, sr *Series, comm string) bool {
	var inB, outB float64
	var inT, outT time.Duration
	ep := 0
	var procs []procIO
	for i := 1; i < sr.samples; i++ {
		start, end := sr.sampleTime(i-1), sr.sampleTime(i)
		for ep < len(res.Episodes) && !res.Episodes[ep].End.After(start) {
			ep++
		}
		inside := ep < len(res.Episodes) && !res.Episodes[ep].Start.After(start) && !res.Episodes[ep].End.Before(end)
		var b float64
		procs = sr.procsOf(i, procs[:0])
		for _, p := range procs {
			if sr.names[p.name].comm == comm {
				b += float64(p.dReadBytes + p.dWriteByte)
			}
		}
		if inside {
			inB, inT = inB+b, inT+end.Sub(start)
		} else {
			outB, outT = outB+b, outT+end.Sub(start)
		}
	}
	if inT <= 0 {
		return false
	}
	if outT <= 0 {
		return true
	}
	return inB/inT.Seconds() >= 3*outB/outT.Seconds()
}

// didEach says what a process did per episode: "postgres
// (postgresql.service) wrote 1.2 GiB each time".
func didEach(p ProcActivity, eps int) string {
	who := p.Comm
	if p.Unit != "" {
		who += " (" + p.Unit + ")"
	}
	verb, per := "wrote", p.WriteBytes/uint64(eps)
	if p.ReadBytes > p.WriteBytes {
		verb, per = "read", p.ReadBytes/uint64(eps)
	}
	return fmt.Sprintf("%s %s %s each time", who, verb, FormatBytes(per))
}
