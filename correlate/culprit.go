package correlate

import (
	"cmp"
	"fmt"
	"math"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/timers"
)

// Naming rules (see the package documentation).
const (
	minFiringShare = 0.5 // of a job's firings followed by an episode
	minMatched     = 2   // firings followed by an episode
	minProcShare   = 0.3 // of episodes with the job's process
	minProcEps     = 2
)

// rankCulprits fills res.Culprits and Episode.Culprit.
func rankCulprits(res *Result, rec *record.Recording, o Options) {
	h := &rec.Header
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
	for i := range h.Jobs {
		if c := evalJob(res, &h.Jobs[i], firings[h.Jobs[i].Name], projected, o); c != nil {
			cs = append(cs, *c)
		}
	}
	if c := recurringUnexplained(res, rec, cs); c != nil {
		cs = append(cs, *c)
	}
	slices.SortStableFunc(cs, func(a, b Culprit) int {
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

// evalJob decides whether job explains episodes, and with what evidence.
func evalJob(res *Result, job *timers.Job, fs []timers.Firing, projected bool, o Options) *Culprit {
	n := len(res.Episodes)
	slices.SortFunc(fs, func(a, b timers.Firing) int { return a.Planned.Compare(b.Planned) })
	period := jobPeriod(job, fs)
	lag := o.LagTolerance
	if period > 0 && lag > period/4 {
		lag = period / 4
	}
	slack := res.Interval

	// (a) firings.
	fireEps := map[int]bool{}
	counted, matched := 0, 0
	var cover time.Duration
	var coverEnd time.Time
	for _, f := range fs {
		from, to := f.Earliest.Add(-slack), f.Latest.Add(lag)
		inRec := !f.Earliest.Before(res.Start) && !f.Earliest.After(res.End.Add(-slack))
		hit := false
		for i := range res.Episodes {
			if s := res.Episodes[i].Start; !s.Before(from) && !s.After(to) {
				fireEps[i], hit = true, true
			}
		}
		if !inRec {
			continue
		}
		counted++
		if hit {
			matched++
		}
		// Union of the windows, clipped to the recording.
		a, b := maxTime(from, res.Start, coverEnd), minTime(to, res.End)
		if b.After(a) {
			cover += b.Sub(a)
			coverEnd = b
		}
	}
	span := res.End.Sub(res.Start)
	coverage := 0.0
	if span > 0 {
		coverage = float64(cover) / float64(span)
	}
	chance := coverage * float64(n)
	fireOK := counted >= minMatched && matched >= minMatched &&
		float64(matched) >= minFiringShare*float64(counted) &&
		len(fireEps) >= minMatched && float64(len(fireEps)) > 2*chance

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
	procOK := len(procEps) >= minProcEps && float64(len(procEps)) >= minProcShare*float64(n)
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
			c.Evidence = append(c.Evidence, fmt.Sprintf("its firings explain %d of %d episodes (%.0f%%); its windows cover %.0f%% of the recording, so chance would give %.1f",
				len(fireEps), n, 100*float64(len(fireEps))/float64(n), 100*coverage, chance))
		}
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
		conf := float64(matched) / float64(counted) * (1 - coverage)
		if 2*len(procEps) >= len(fireEps) && len(procEps) > 0 {
			conf += (1 - conf) * 0.5
		}
		if matched < 3 {
			conf *= 0.8
		}
		c.Confidence = conf
	} else {
		c.Confidence = 0.4 + 0.4*float64(len(procEps))/float64(n)
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

func maxTime(ts ...time.Time) time.Time {
	m := ts[0]
	for _, t := range ts[1:] {
		if t.After(m) {
			m = t
		}
	}
	return m
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
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
	if p.Comm == "" {
		return false
	}
	return slices.Contains(JobExecutables(j), p.Comm)
}

// recurringUnexplained reports a period whose episodes the named jobs do
// not explain, as the process that did their I/O or as unknown.
func recurringUnexplained(res *Result, rec *record.Recording, named []Culprit) *Culprit {
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
		eps map[int]bool
	}
	procs := map[string]*agg{}
	for _, i := range un {
		e := &res.Episodes[i]
		seen := map[int]bool{}
		for _, list := range [][]ProcActivity{e.Processes, e.Started} {
			for _, pr := range list {
				if seen[pr.PID] {
					continue
				}
				seen[pr.PID] = true
				a := procs[pr.Comm]
				if a == nil {
					a = &agg{ProcActivity: ProcActivity{Comm: pr.Comm, Unit: pr.Unit, Cmdline: pr.Cmdline}, eps: map[int]bool{}}
					procs[pr.Comm] = a
				}
				a.eps[i] = true
				a.ReadBytes += pr.ReadBytes
				a.WriteBytes += pr.WriteBytes
			}
		}
	}
	// Only processes much busier in episodes than outside them count, so
	// the service that is always busy is never blamed.
	var cands []*agg
	for _, a := range procs {
		if len(a.eps) >= 2 && a.Bytes() > 0 && specific(res, rec, a.Comm) {
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
		c.Evidence = append(c.Evidence, fmt.Sprintf("recurs every %s, %s, no timer or cron job: an in-process schedule?",
			FormatDuration(p.Period), didEach(best.ProcActivity, len(best.eps))))
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
func specific(res *Result, rec *record.Recording, comm string) bool {
	var inB, outB float64
	var inT, outT time.Duration
	ep := 0
	for i := 1; i < len(rec.Samples); i++ {
		start, end := rec.Samples[i-1].Time, rec.Samples[i].Time
		for ep < len(res.Episodes) && !res.Episodes[ep].End.After(start) {
			ep++
		}
		inside := ep < len(res.Episodes) && !res.Episodes[ep].Start.After(start) && !res.Episodes[ep].End.Before(end)
		var b float64
		for _, p := range rec.Samples[i].Procs {
			if p.Comm == comm {
				b += float64(p.DeltaReadBytes + p.DeltaWriteBytes)
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
