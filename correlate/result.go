package correlate

import (
	"math"
	"time"

	"github.com/memdiag/memdiag/latency"
	"github.com/memdiag/memdiag/memstate"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/signal"
	"github.com/memdiag/memdiag/timers"
)

// Result is everything [Analyze] found in one recording.
type Result struct {
	Host      string
	Start     time.Time // first sample
	End       time.Time // last sample
	Interval  time.Duration
	Location  *time.Location // zone of the timeline and schedules
	Intervals int            // number of intervals analysed

	HasLatency bool
	Stat       Stat
	Spike      SpikeRule
	Thresholds Thresholds
	PSIScope   PSIScope // the PSI the memory signals read: host or cgroup (or any)
	// Cgroup is the recorded cgroup scope (Header.Cgroup): the --cgroup
	// directory, or the victim's v2 group's; "" for the host.
	Cgroup string
	// CgroupLimit and CgroupLimitBytes are the memory limit that bounds
	// Cgroup (Header.CgroupLimit): the group that sets it and its bytes;
	// "" when none was recorded.
	CgroupLimit      string
	CgroupLimitBytes uint64
	// Victim is whose latency the recording explains (Header.Victim);
	// nil when none was found or recorded. VictimNote is the recorder's
	// note on it (the "victim" collector status's reason): why none was
	// found, or why its own stall cannot be read apart from the host's.
	Victim     *record.Victim
	VictimNote string
	// Baselines is each signal's median over the recording, in the signal's
	// unit; absent when the recording lacks the signal.
	Baselines map[Signal]float64
	// Catalogue is every signal.Catalogue entry over the whole recording
	// (mean rate and peak interval rate), as gate judges a run.
	Catalogue []CatalogueRate
	// LatencyBaseline is the median of the latency statistic over the
	// recording.
	LatencyBaseline time.Duration

	// Require lists the signals an episode needed (Options.Require, or
	// psi_some and psi_full by default when a cgroup's PSI was read).
	Require  []Signal
	Episodes []Episode
	// LoneSpikes are latency spikes outside episodes: no kernel signal
	// (or no required one) rose with them.
	LoneSpikes []Spike
	Spikes     int     // intervals with a latency spike
	Period     *Period // recurrence of the episodes; nil when none was found
	// SpikePeriod is the recurrence of the latency spikes: the episodes
	// that contain one and the spikes outside episodes.
	SpikePeriod *Period
	Culprits    []Culprit // by rank, best first; empty: no culprit
	// Undecided are jobs that explain episodes together but that
	// correlation cannot tell apart (splitUndecided): fired in the same
	// wake-up, about the same I/O and memory, no traced chain judging
	// them. None of them is named; each lists the others in
	// UndecidedWith. Sorted as Culprits, Rank 0.
	Undecided []Culprit
	// VictimReads is the victim reading in the recurring episodes no job
	// explains, set aside as no cause (UnnamedVictim): its program and in
	// how many episodes it did their in-scope I/O. nil when it was not.
	VictimReads *VictimReads
	// AB is what ab's report counted when watch ran ab
	// (record.End.AB), or --latency-ab-output gave: its failed and
	// non-2xx requests, totals no interval can take (set by package
	// analysis). nil otherwise.
	AB *latency.ABSummary
	// NotRun lists every job of the recording's inventory that is not a
	// culprit, with why (NotRun.Kind); empty without episodes.
	NotRun []NotRun
	// IOBursts are runs of disk or reclaim signals without memory stall
	// of the scope (when Require asks for a stall): not memory pressure.
	IOBursts []IOBurst
	// BurstLead weighs the LoneSpikes that came with an I/O burst against
	// chance (WeighBursts); nil when none did.
	BurstLead *BurstLead
	// Sustained is pressure lasting most of the recording, nil if none.
	Sustained *Sustained
	// Failing is a load that failed most of the time (no failure spike
	// is flagged then), nil if none.
	Failing *Failing
	// ProcessesRecorded says per-process I/O or process events were
	// recorded, so a job that never ran is known not to have run.
	ProcessesRecorded bool
	// ChainTraced says some interval holds the page-cache chain traced
	// with eBPF (record.Chain): credits weigh what a culprit cost the
	// victim where it was (chain.go).
	ChainTraced bool

	Totals Totals
	// Warnings say what the analysis could not do (report writes them).
	Warnings []Warning
	// Lacks says what the recording does not hold — PSI, other users'
	// per-process I/O, kernel process events, its end (record.Gaps.Lines)
	// — for the report to say before any verdict: a signal not recorded
	// is unknown, not quiet.
	Lacks []string

	// Growth lists the recorded processes whose anonymous memory grew
	// steadily (memstate.Growth over Sample.RSS): a leak or allocator
	// retention. OOMKills lists the intervals with OOM kills.
	Growth   []memstate.ProcGrowth
	OOMKills []OOMKill
}

// Spike is a run of intervals with a latency spike and no episode.
type Spike struct {
	Start, End  time.Time
	LatencyPeak time.Duration
	Failed      int // failed requests in the spike's intervals
}

// SignalPeak is one signal raised in an episode.
type SignalPeak struct {
	Signal   Signal  `json:"signal"`
	Peak     float64 `json:"peak"`     // highest value in the episode, in Signal.Unit()
	Baseline float64 `json:"baseline"` // the recording's median
}

// CatalogueRate is one catalogue signal over an episode: its mean rate
// (Σchange / Σwall over the intervals that had it) and its highest
// interval rate, in Signal.RateUnit(); NaN when no interval had it.
type CatalogueRate struct {
	Signal     *signal.Signal
	Mean, Peak float64
}

// episodeRates is every catalogue entry's CatalogueRate over ivs (an
// episode's intervals, or the whole recording's).
func episodeRates(ivs []ival) []CatalogueRate {
	out := make([]CatalogueRate, len(signal.Catalogue))
	for k, sig := range signal.Catalogue {
		var sum, wall float64
		peak := math.NaN()
		for i := range ivs {
			if k >= len(ivs[i].Cat) || math.IsNaN(ivs[i].Cat[k]) {
				continue
			}
			r, dt := ivs[i].Cat[k], ivs[i].Dt.Seconds()
			sum, wall = sum+r*dt, wall+dt
			if math.IsNaN(peak) || r > peak {
				peak = r
			}
		}
		mean := math.NaN()
		if wall > 0 {
			mean = sum / wall
		}
		out[k] = CatalogueRate{Signal: sig, Mean: mean, Peak: peak}
	}
	return out
}

// ProcActivity is one process's part in an episode.
type ProcActivity struct {
	PID int `json:"pid,omitempty"` // 0 in a culprit's summed processes
	// PIDs (a culprit's summed processes) are the recorded processes the
	// row sums, sorted: the culprit's own processes, by PID, so a list
	// of every process on the host (watch's end summary) marks these and
	// not another tenant's process of the same name.
	PIDs []int `json:"pids,omitempty"`
	// ProcIDs are the same processes by identity, PID and start time,
	// sorted: a PID is reused in a long recording, and the later,
	// unrelated process with the culprit's old PID is not the culprit's.
	// A process whose start time was not recorded has StartTicks 0.
	ProcIDs []ProcID `json:"proc_ids,omitempty"`
	PPID    int      `json:"ppid,omitempty"`
	Comm    string   `json:"comm"`
	// Program names the process by what it runs: the base name of
	// argv[0], or for an interpreter (python3, sh, perl …) the script it
	// runs ("python3 pressure.py" → "pressure.py"); Comm when the command
	// line was not recorded.
	Program    string `json:"program,omitempty"`
	Cmdline    string `json:"cmdline,omitempty"`
	Unit       string `json:"unit,omitempty"`
	ReadBytes  uint64 `json:"read_bytes"`  // in the episode
	WriteBytes uint64 `json:"write_bytes"` // in the episode
	Started    bool   `json:"started,omitempty"`
	Exited     bool   `json:"exited,omitempty"`
	// StartedBy is the chain of recorded ancestors, parent first
	// ("periodic.sh 4100", "bash 4000"), from the parent PIDs of the
	// process events and samples.
	StartedBy []string `json:"started_by,omitempty"`
	// OutsideScope: under a cgroup scope, its cgroup is neither the
	// recorded group, nor one of its descendants, nor a non-root ancestor,
	// so it cannot cause the group's limit reclaim (only host-wide
	// reclaim).
	OutsideScope bool `json:"outside_scope,omitempty"`
	// CgroupUnknown: under a cgroup scope, its cgroup was not recorded
	// (no sample or event of it carried /proc/PID/cgroup), so it may be
	// in the group or not; it is not marked outside, and the culprit
	// model counts it as able to cause the group's reclaim.
	CgroupUnknown bool `json:"cgroup_unknown,omitempty"`
	// Reaped: the row is not one process but the children its parent
	// (PPID) reaped between two scans, which no scan saw: their I/O, from
	// the parent's record.ProcIO.DeltaReaped*Bytes. They count as the
	// parent's job's, as they ran in its unit, cgroup and lineage.
	Reaped bool `json:"reaped,omitempty"`
}

// ProcID is a process by identity: its PID and its start time, which
// tell apart the processes that had the same PID in turn.
type ProcID struct {
	PID int `json:"pid"`
	// StartTicks is when it started, in clock ticks after boot
	// (/proc/PID/stat field 22, record.ProcIO.StartTicks); 0 when not
	// recorded (older recordings, events without it).
	StartTicks uint64 `json:"start_ticks,omitempty"`
}

// Is reports whether the process pid that started at start (0: unknown)
// is id: the same PID and, where both start times are known, the same
// start. Where either is unknown the PID alone decides.
func (id ProcID) Is(pid int, start uint64) bool {
	return id.PID == pid && (id.StartTicks == 0 || start == 0 || id.StartTicks == start)
}

// procPart is one process's activity in an episode, with what the model
// needs to find it again in the recording.
type procPart struct {
	ProcActivity
	start     uint64    // start ticks, 0 if unknown
	execAt    time.Time // time of its exec event, zero if none
	memGrowth uint64    // RSS growth in the episode (Episode.MemTaken)
}

// procPID is the PID to find the process in the recording by: the
// parent's for a Reaped row.
func (p *procPart) procPID() int {
	if p.Reaped {
		return p.PPID
	}
	return p.PID
}

// Bytes is ReadBytes+WriteBytes.
func (p ProcActivity) Bytes() uint64 { return p.ReadBytes + p.WriteBytes }

// Episode is a run of flagged intervals.
type Episode struct {
	Index      int
	Start, End time.Time
	Intervals  int
	Signals    []SignalPeak // in AllSignals order
	// Catalogue is every signal.Catalogue entry's rate in the episode, in
	// catalogue order, whether or not it raised the episode.
	Catalogue []CatalogueRate
	// Stall holds the scope's PSI some and full peaks in the episode (share
	// of wall time, /proc/pressure/memory or the group's memory.pressure)
	// whether or not they rose above their threshold, NaN when not
	// recorded (nil in an Episode not built by Analyze): some ≥ full
	// always, and a CSV cell left blank beside a raised full would read
	// as 0.
	Stall []float64
	// Spike is true when an interval of the episode, or a spike interval
	// within Options.GapTolerance of it (that spike is the episode's),
	// had a latency spike. SpikeStart and SpikeEnd span those intervals,
	// zero without a spike: they can begin before the episode or end
	// after it.
	Spike                bool
	SpikeStart, SpikeEnd time.Time
	// LatencyPeak is the highest latency statistic in the episode, 0 when
	// no request was recorded. Failed is the number of failed requests in
	// the episode's intervals. Both leave out the intervals of a slowdown
	// that was under way before the stall and that it did not make worse
	// (effect before cause: they are a spike outside episodes), so an
	// episode a slowdown ran through at its own level can show 0 or its
	// calm remainder.
	LatencyPeak time.Duration
	Failed      int
	// Processes did the most I/O in the episode (most first); Started and
	// Exited list processes that began or ended in it or just before it.
	Processes []ProcActivity
	Started   []ProcActivity
	Exited    []ProcActivity
	// Culprit is the name of the best-ranked culprit that explains the
	// episode, "" if none.
	Culprit string
	// IOBytes is the I/O (read+write) of every recorded process in the
	// episode; OutsideBytes the part of it done by processes outside the
	// cgroup scope (ProcActivity.OutsideScope). A culprit's share is of
	// IOBytes − OutsideBytes (scopeBytes).
	IOBytes      uint64
	OutsideBytes uint64
	// ReapedBytes is the part of IOBytes done by children reaped between
	// two scans that no scan saw (ProcActivity.Reaped rows);
	// UnattributedReapedBytes the part of it whose parent no job's unit,
	// cgroup or lineage claims: counted in the denominator, credited to
	// no job.
	ReapedBytes             uint64
	UnattributedReapedBytes uint64
	// MemTaken is the RSS growth (anon+file, from Sample.RSS's largest
	// holders) of the processes that grew in the episode, from the sample
	// one interval before it began to their peak in it: the denominator of a culprit's share
	// of the memory taken.
	MemTaken uint64
	// OutsideMem is the part of MemTaken taken by processes outside the
	// cgroup scope; a culprit's memory share is of MemTaken − OutsideMem
	// (scopeMem).
	OutsideMem uint64
	// Onset is the first stall onset recorded in the episode or the
	// interval before it (record.StallOnset: the moment PSI crossed the
	// watch's --stall-threshold, to the 50 ms or better), nil when none
	// was recorded; its Procs are the processes seen at that moment.
	Onset *record.StallOnset
	// Chain is the victim's side of the episode's traced page-cache
	// chain (chain.go), nil when none of its intervals was traced.
	Chain *ChainEpisode
	// VictimWaits is how long the victim process waited on memory in the
	// episode and the interval before it (its delay accounting,
	// victimwaits.go), nil when not recorded.
	VictimWaits *VictimWaits
}

// scopeBytes is the I/O of the episode's processes that can cause the
// scope's reclaim: every recorded process's, less that of the processes
// outside a cgroup scope. It is the denominator of a culprit's share.
func (e *Episode) scopeBytes() uint64 { return e.IOBytes - min(e.OutsideBytes, e.IOBytes) }

// scopeMem is MemTaken less what processes outside a cgroup scope took:
// the denominator of a culprit's memory share.
func (e *Episode) scopeMem() uint64 { return e.MemTaken - min(e.OutsideMem, e.MemTaken) }

// Has reports whether the episode raised s.
func (e *Episode) Has(s Signal) (SignalPeak, bool) {
	for _, p := range e.Signals {
		if p.Signal == s {
			return p, true
		}
	}
	return SignalPeak{}, false
}

// Period is a recurrence found in a set of times.
type Period struct {
	Period   time.Duration
	Jitter   time.Duration // largest deviation of a matched time from the fitted schedule
	Phase    time.Time     // first point of the fitted schedule in the recording
	Matched  int           // times on the schedule
	Expected int           // schedule points within the recording
	Missed   int           // schedule points with no time
	Extra    int           // times off the schedule
	Score    float64       // F1 of precision Matched/times and recall Matched/Expected
	Members  []int         // indexes of the matched times
}

// Kind says what a culprit is.
type Kind string

// Culprit kinds.
const (
	KindTimer   Kind = "timer"
	KindCron    Kind = "cron"
	KindProcess Kind = "process"
	KindUnknown Kind = "unknown"
)

// Culprit is a job or process that explains episodes, with its evidence.
type Culprit struct {
	Rank int
	Name string
	Kind Kind
	Job  *timers.Job // nil for kinds process and unknown

	Episodes          []int // indexes of the episodes it explains
	EpisodesExplained int
	EpisodesTotal     int
	FiringsMatched    int // firings followed by an episode
	Firings           int // firings within the recording
	// Period is the job's period, or the episodes' recurrence for kinds
	// process and unknown; 0 if unknown.
	Period time.Duration

	// Processes are the job's (or the culprit's) processes seen in its
	// episodes, with their I/O summed over those episodes.
	Processes []ProcActivity
	// BytesPerEpisode is the mean I/O of those processes per explained
	// episode.
	BytesPerEpisode uint64

	Confidence float64 // 0..1, computed from Proof
	// Proof is the structured evidence the confidence is computed from.
	Proof *Proof
	// NewEachTime (kind process): each episode had a new process of that
	// name outside any systemd unit or container, or one whose recorded
	// parent runs another program, so something else (a script, a loop)
	// starts it on the schedule; false: one long-lived process or a
	// service's own workers, a schedule inside it (startedAnew).
	NewEachTime bool `json:"new_process_each_time,omitempty"`
	// Missing (kind unknown) is what the recording lacked to name the
	// cause of the recurrence; the advice follows it.
	Missing []Missing
	// Lag (kinds timer and cron) is how long after a firing an episode
	// counts as following it; Projected: its schedule was projected over
	// the recording.
	Lag       time.Duration
	Projected bool
	// Runs (kind process) is how many runs of it were credited: new
	// processes (each run's oldest), or 1 for a long-lived one.
	// Programs are the programs credited with the recurring episodes no
	// job explains, the named one first.
	Runs     int
	Programs []ProgramCredit
	// UndecidedWith (an entry of Result.Undecided) are the jobs it cannot
	// be told apart from: fired with it, about the same work, no traced
	// chain to judge them (splitUndecided). Empty for a culprit.
	UndecidedWith []string
	// Why is why its group was left undecided (an entry of
	// Result.Undecided; nil otherwise).
	Why *UndecidedWhy
}

// ProgramCredit is a program credited with recurring episodes no job
// explains: its median Share of the recorded I/O in the Episodes of
// them (of Of) it is credited with. Of a culprit of kind unknown, it
// is a program credited with two or more of them and not named, and
// Unnamed says why.
type ProgramCredit struct {
	Program  string
	Share    float64
	Episodes int
	Of       int
	Unnamed  Unnamed
}

// Unnamed is why a program that did the I/O of recurring episodes was
// not named (ProgramCredit.Unnamed).
type Unnamed string

// Why a credited program was not named.
const (
	// UnnamedBusy: it did under 3 times as much I/O per interval inside
	// the episodes as outside them: its I/O does not tell them apart.
	UnnamedBusy Unnamed = "busy"
	// unnamedChance: p_null ≥ Model.MaxChance and a median share below
	// SoloShare: too few episodes to rule out chance.
	unnamedChance Unnamed = "chance"
	// UnnamedVictim: it is the victim (its recorded process or one it
	// started) and read more than it wrote in the episodes, with no
	// traced chain to judge it: a victim whose pages reclaim took reads
	// them back in its own episodes, so its reads there are as likely
	// the stall's effect as its cause.
	UnnamedVictim Unnamed = "victim"
)

// Missing is one thing a recording lacked to name the cause of a
// recurrence (Culprit.Missing).
type Missing string

// What a recording can lack to name a recurrence's cause.
const (
	// MissingProcesses: no per-process I/O and no process events were
	// recorded (watch ran without root, or its procs collector was off).
	MissingProcesses Missing = "processes"
	// MissingIOAccess: /proc/PID/io was unreadable for most processes
	// (Sample.Scan.Denied): their I/O is not in the recording.
	MissingIOAccess Missing = "io_access"
	// MissingEvents: no process events from the kernel (watch --events
	// off, or polled): a process that started and ended between two
	// samples is not in the recording.
	MissingEvents Missing = "events"
	// MissingEpisodes: recorded processes did the episodes' I/O, but
	// too few episodes to rule out chance (p_null ≥ MaxChance, share
	// below SoloShare): a longer recording decides.
	MissingEpisodes Missing = "episodes"
	// MissingBusy: recorded processes did the episodes' I/O, but
	// were as busy outside them (ProgramCredit.Unnamed busy): their I/O
	// does not set the schedule, and what does (memory taken beyond
	// the RSS holders kept, a job cgroup's page cache) is not recorded.
	MissingBusy Missing = "busy"
	// MissingIO: processes were recorded and readable, and none did
	// CreditFloor and MinShare of the I/O of two or more of the
	// recurring episodes: the pressure came from memory the recording does not
	// attribute (kernel, page cache of processes outside the top, or a
	// cgroup's other tasks).
	MissingIO Missing = "io"
	// MissingOutsideIO: as MissingIO within the analysed scope, but
	// processes outside it did I/O in those episodes
	// (Episode.OutsideBytes): what the recording cannot tell is whether
	// they reach the group (a memory limit it does not place them under).
	MissingOutsideIO Missing = "outside_io"
	// MissingVictimSelf: the victim's own reads did the recurring
	// episodes' I/O (ProgramCredit.Unnamed victim) and no traced chain
	// tells reading back from causing: what took its memory ran
	// outside the analysed scope or did no I/O the recording attributes.
	MissingVictimSelf Missing = "victim_self"
)

// ConfidenceLabel is "high" (≥ 0.75), "medium" (≥ 0.5) or "low".
func (c *Culprit) ConfidenceLabel() string {
	switch {
	case c.Confidence >= 0.75:
		return "high"
	case c.Confidence >= 0.5:
		return "medium"
	}
	return "low"
}

// Totals are whole-recording figures, for before/after comparisons.
type Totals struct {
	Duration time.Duration
	Requests int // every request, failed ones included
	Errors   int // failed requests
	// ErrorIntervals counts the intervals with a failed request.
	ErrorIntervals int
	// LoadFrom and LoadTo bound the load: the first and last request's
	// start (or the first and last interval with requests).
	LoadFrom, LoadTo time.Time
	// RequestsPerSec is over LoadFrom–LoadTo; 0 when unknown: with the
	// probe as the only source (RateFromProbe) it would be the probe's
	// own fixed rate, not the service's throughput.
	RequestsPerSec float64
	RateFromProbe  bool
	// Mean and P99 are of the successful requests unless
	// Options.LatencyWithFailed.
	Mean     time.Duration // request-weighted mean latency
	P99      time.Duration // exact with Options.Requests; else the request-weighted 99th percentile of the interval p99s
	P99Exact bool
	// MemStall is the time with some task stalled on memory (PSI memory
	// some, host), summed over the intervals; CgroupMemStall the same for
	// the --cgroup group.
	MemStall       time.Duration
	CgroupMemStall time.Duration
}

// UndecidedWhy is why jobs fired together were left undecided
// (Culprit.Why): which of the two rules of splitUndecided held, between
// the job with the most work (Top, its median work TopWork: I/O plus
// memory taken, bytes) and the member it did not stand out from (Next,
// NextWork). Rule UndecidedByMedian: NextWork ≥ half TopWork.
// UndecidedByEpisodes: TopWork is more than twice NextWork, but in
// NotTwice of the Shared episodes both are credited with Top did less
// than twice Next's work, more than 1 − Model.UndecidedOverlap of them.
type UndecidedWhy struct {
	Rule              string
	Top, Next         string
	TopWork, NextWork uint64
	NotTwice, Shared  int
}

// The rules of UndecidedWhy.
const (
	UndecidedByMedian   = "median"
	UndecidedByEpisodes = "episodes"
)

// VictimReads is the victim's own reading in recurring episodes, which
// names nobody without the traced chain (Result.VictimReads).
type VictimReads struct {
	Program  string
	Episodes int // episodes in which it did the in-scope I/O credited
	Of       int // the recording's episodes
}
