package report

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/report/mem"
	"github.com/memdiag/memdiag/signal"

	"github.com/memdiag/memdiag/memstate"

	"github.com/memdiag/memdiag/correlate"
)

// The JSON document. Field names carry units; times are RFC 3339 in the
// recording's zone.

type jsonResult struct {
	// SchemaVersion is the document's shape (JSONSchemaVersion).
	SchemaVersion   int                `json:"schema_version"`
	Host            string             `json:"host"`
	Start           time.Time          `json:"start"`
	End             time.Time          `json:"end"`
	IntervalS       float64            `json:"interval_s"`
	Intervals       int                `json:"intervals"`
	HasLatency      bool               `json:"has_latency"`
	Stat            string             `json:"stat"`
	SpikeRule       string             `json:"spike_rule"`
	LatencyBaseline *float64           `json:"latency_baseline_ms"`
	SpikeIntervals  int                `json:"spike_intervals"`
	Thresholds      jsonThresh         `json:"thresholds"`
	Baselines       map[string]float64 `json:"baselines"`
	// Catalogue is every signal.Catalogue entry over the whole recording,
	// as gate judges a run (correlate.Result.Catalogue).
	Catalogue   []jsonCatalogueRate `json:"catalogue"`
	Period      *jsonPeriod         `json:"period"`
	SpikePeriod *jsonPeriod         `json:"spike_period"`
	Episodes    []jsonEpisode       `json:"episodes"`
	// Procs are the processes the episodes' started and exited lists
	// refer to, each (process, its I/O and flags in the episode) stated
	// once; Ancestries the distinct started_by chains Procs refer to.
	Procs      []jsonProc    `json:"procs"`
	Ancestries [][]string    `json:"ancestries"`
	Spikes     []jsonSpike   `json:"spikes"` // latency spikes outside episodes
	Require    []string      `json:"require"`
	Culprits   []jsonCulprit `json:"culprits"`
	// Undecided are the jobs that explain episodes together but that
	// correlation cannot tell apart (correlate.Result.Undecided): none of
	// them is a culprit; each lists the others in undecided_with.
	Undecided []jsonCulprit `json:"undecided"`
	// VictimReads is the victim's own reading set aside as no cause in
	// recurring episodes no job explains (correlate.Result.VictimReads).
	VictimReads *jsonVictimReads `json:"victim_reads,omitempty"`
	// AB is what ab's report counted (correlate.Result.AB): totals for
	// the run, left out of totals.errors since ab -g places none of them.
	AB      *jsonAB    `json:"ab,omitempty"`
	Verdict string     `json:"verdict"`
	Totals  jsonTotals `json:"totals"`
	// Warnings are the analysis warnings' sentences; WarningDetails the
	// same warnings, in the same order, as kind and fields.
	Warnings       []string            `json:"warnings"`
	WarningDetails []correlate.Warning `json:"warning_details"`
	// RecordingLacks says what the recording does not hold (no PSI,
	// per-process I/O denied, events polled, cut short).
	RecordingLacks []string `json:"recording_lacks"`
	// MemoryGrowth lists processes whose anonymous memory grew steadily;
	// OOMKills the intervals with OOM kills.
	MemoryGrowth []memstate.ProcGrowth `json:"memory_growth"`
	OOMKills     []correlate.OOMKill   `json:"oom_kills"`
	// IOBursts are disk or reclaim bursts without memory stall;
	// Sustained is pressure lasting most of the recording (null if
	// none); NotRun the jobs scheduled near episodes that did not run.
	IOBursts  []correlate.IOBurst  `json:"io_bursts"`
	Sustained *correlate.Sustained `json:"sustained"`
	// Failing is a load that failed most of the time (null if not).
	Failing           *correlate.Failing `json:"failing"`
	NotRun            []jsonNotRun       `json:"not_run"`
	ProcessesRecorded bool               `json:"processes_recorded"`
	// ChainTraced: the recording holds the page-cache chain traced with
	// eBPF, and credits weigh what a culprit cost the victim.
	ChainTraced bool `json:"chain_traced"`
	// Victim is whose latency the recording explains and whose PSI the
	// cgroup scope is; absent for recordings with no victim lookup.
	Victim *jsonVictim `json:"victim,omitempty"`
	// CgroupLimit is the group whose memory limit bounds the cgroup
	// scope and CgroupLimitBytes that limit (record.Header.CgroupLimit);
	// absent when none was recorded.
	CgroupLimit      string `json:"cgroup_limit,omitempty"`
	CgroupLimitBytes uint64 `json:"cgroup_limit_bytes,omitempty"`
}

type jsonThresh struct {
	PSISome       float64 `json:"psi_some_share"`
	PSIFull       float64 `json:"psi_full_share"`
	LRUDrop       float64 `json:"lru_drop_bytes_per_s"`
	LRUDropMin    float64 `json:"lru_drop_min_bytes"`
	Refault       float64 `json:"refault_pages_per_s"`
	DirectReclaim float64 `json:"direct_reclaim_pages_per_s"` // signal.DirectReclaim.JSONKey()
	LimitReclaim  float64 `json:"limit_reclaim_pages_per_s"`  // signal.LimitReclaim.JSONKey()
	DiskIO        float64 `json:"disk_io_bytes_per_s"`
	IOTime        float64 `json:"io_time_s_per_s"`
	SwapOut       float64 `json:"swap_out_bytes_per_s"`
	MADFactor     float64 `json:"mad_factor"`
}

type jsonPeriod struct {
	PeriodS  float64   `json:"period_s"`
	JitterS  float64   `json:"jitter_s"`
	Phase    time.Time `json:"phase"`
	Matched  int       `json:"matched"`
	Expected int       `json:"expected"`
	Missed   int       `json:"missed"`
	Extra    int       `json:"extra"`
	Score    float64   `json:"score"`
}

// jsonSignal is one signal an episode raised. Scope is whose counters
// it read: "host" for every signal but psi_some and psi_full, which read
// the analysis's PSI scope (Result.PSIScope: "host", "cgroup" or "any").
type jsonSignal struct {
	Signal   string  `json:"signal"`
	Peak     float64 `json:"peak"`
	Baseline float64 `json:"baseline"`
	Unit     string  `json:"unit"`
	Scope    string  `json:"scope"`
}

// jsonCatalogueRate is one catalogue signal over the recording: Key is
// its JSON key (signal.Signal.RateKey; an episode's catalogue is keyed
// by it), Mean and Peak are in Unit, null when the recording lacks what
// the signal needs.
type jsonCatalogueRate struct {
	Name  string   `json:"name"`
	Key   string   `json:"key"`
	Unit  string   `json:"unit"`
	Mean  *float64 `json:"mean"`
	Peak  *float64 `json:"peak"`
	Title string   `json:"title"`
}

// jsonRate is one catalogue signal's mean and peak over an episode, in
// the unit of the top-level catalogue entry with its key; null when the
// recording lacks what the signal needs.
type jsonRate struct {
	Mean *float64 `json:"mean"`
	Peak *float64 `json:"peak"`
}

type jsonEpisode struct {
	Index int `json:"index"`
	// Time is the episode's one time, as the timeline row, the stall
	// onsets and the verdict give it: the end of its first interval.
	Time      time.Time    `json:"time"`
	Start     time.Time    `json:"start"`
	End       time.Time    `json:"end"`
	DurationS float64      `json:"duration_s"`
	Signals   []jsonSignal `json:"signals"`
	// Catalogue is every signal.Catalogue entry over the episode, whether
	// or not it raised it, by its key (jsonCatalogueRate.Key): the same
	// values as gate and mem give (correlate.CatalogueRate), in the unit
	// the top-level catalogue entry of that key names.
	Catalogue map[string]jsonRate `json:"catalogue"`
	Spike     bool                `json:"spike"`
	// SpikeStart and SpikeEnd span the spike intervals that are this
	// episode's, inside it or within --gap of it (correlate.Episode).
	SpikeStart *time.Time               `json:"spike_start,omitempty"`
	SpikeEnd   *time.Time               `json:"spike_end,omitempty"`
	LatencyMS  *float64                 `json:"latency_ms"`
	Processes  []correlate.ProcActivity `json:"processes"`
	// Started and Exited are indexes into jsonResult.Procs: the
	// processes that began or ended in the episode or just before it.
	Started []int  `json:"started"`
	Exited  []int  `json:"exited"`
	Culprit string `json:"culprit"`
	// ReapedBytes is the I/O of children reaped between two scans that no
	// scan saw (the "exited threads or children of" rows), part of the episode's total;
	// UnattributedReapedBytes the part of it no job claimed
	// (correlate.Episode).
	ReapedBytes             uint64 `json:"reaped_bytes,omitempty"`
	UnattributedReapedBytes uint64 `json:"unattributed_reaped_bytes,omitempty"`
	// Onset is the recorded stall onset: when PSI crossed the threshold
	// and the processes seen then.
	Onset *record.StallOnset `json:"onset,omitempty"`
	// Chain is the victim's side of the episode's traced page-cache
	// chain (correlate.ChainEpisode); absent when it was not traced.
	Chain *correlate.ChainEpisode `json:"chain,omitempty"`
	// VictimWaits is how long the victim process waited on memory in the
	// episode and the interval before it, from its delay accounting
	// (correlate.VictimWaits); absent when not recorded.
	VictimWaits *correlate.VictimWaits `json:"victim_waits,omitempty"`
}

// JSONSchemaVersion is the analyze JSON document's shape. 1 (no
// schema_version field) embedded a full copy of every process in each
// episode's started and exited lists, each with its started_by chain; 2
// states each once in procs and ancestries and the lists hold indexes
// (docs/analyze.md, "JSON").
const JSONSchemaVersion = 2

// jsonProc is one correlate.ProcActivity of an episode's started or
// exited list with its started_by chain replaced by Ancestry, an index
// into jsonResult.Ancestries (absent: no recorded ancestor).
type jsonProc struct {
	correlate.ProcActivity
	// StartedBy, always nil, hides the ProcActivity's chain, which
	// Ancestry refers to.
	StartedBy []string `json:"started_by,omitempty"`
	Ancestry  *int     `json:"ancestry,omitempty"`
}

// procTable states each process of the episodes' started and exited
// lists once (jsonResult.Procs) and each started_by chain once
// (jsonResult.Ancestries).
type procTable struct {
	procs      []jsonProc
	rows       map[string]int // a row's JSON: its index in procs
	ancestries [][]string
	chains     map[string]int // a chain joined by NUL: its index in ancestries
}

// ref is p's index in t.procs, added when new: two lists (or episodes)
// holding the same process with the same I/O and flags share the row.
func (t *procTable) ref(p *correlate.ProcActivity) int {
	row := jsonProc{ProcActivity: *p}
	row.ProcActivity.StartedBy = nil
	if len(p.StartedBy) > 0 {
		chain := strings.Join(p.StartedBy, "\x00")
		k, ok := t.chains[chain]
		if !ok {
			k = len(t.ancestries)
			t.chains[chain] = k
			t.ancestries = append(t.ancestries, p.StartedBy)
		}
		row.Ancestry = &k
	}
	// The row's JSON is its key; it holds strings, integers and bools
	// only, but were it to fail, the row is written unshared.
	b, err := json.Marshal(row)
	if i, ok := t.rows[string(b)]; ok && err == nil {
		return i
	}
	i := len(t.procs)
	if err == nil {
		t.rows[string(b)] = i
	}
	t.procs = append(t.procs, row)
	return i
}

// refs is the indexes of ps in t, [] when there is none.
func (t *procTable) refs(ps []correlate.ProcActivity) []int {
	out := make([]int, 0, len(ps))
	for i := range ps {
		out = append(out, t.ref(&ps[i]))
	}
	return out
}

type jsonSpike struct {
	Start     time.Time `json:"start"`
	End       time.Time `json:"end"`
	LatencyMS *float64  `json:"latency_ms"`
}

type jsonCulprit struct {
	Rank              int                      `json:"rank"`
	Name              string                   `json:"name"`
	Kind              correlate.Kind           `json:"kind"`
	Confidence        float64                  `json:"confidence"`
	ConfidenceLabel   string                   `json:"confidence_label"`
	EpisodesExplained int                      `json:"episodes_explained"`
	EpisodesTotal     int                      `json:"episodes_total"`
	EpisodeShare      *float64                 `json:"episode_share"`
	SpikesExplained   int                      `json:"spike_episodes_explained"`
	FiringsMatched    int                      `json:"firings_matched"`
	Firings           int                      `json:"firings"`
	FiringShare       *float64                 `json:"firing_share"`
	PeriodS           float64                  `json:"period_s,omitempty"`
	Source            string                   `json:"source,omitempty"`
	Unit              string                   `json:"unit,omitempty"`
	Command           string                   `json:"command,omitempty"`
	Schedule          []string                 `json:"schedule,omitempty"`
	File              string                   `json:"file,omitempty"`
	Episodes          []int                    `json:"episodes"`
	Processes         []correlate.ProcActivity `json:"processes"`
	BytesPerEpisode   uint64                   `json:"bytes_per_episode"`
	Evidence          []string                 `json:"evidence"`
	Advice            []string                 `json:"advice"`
	// Missing (kind unknown): what the recording lacked to name the
	// cause (correlate.Missing).
	Missing []correlate.Missing `json:"missing,omitempty"`
	// Proof is the structured evidence the confidence is computed from
	// (correlate.Proof; docs/analyze.md gives the formula).
	Proof *jsonProof `json:"proof"`
	// UndecidedWith (an entry of undecided) are the jobs it cannot be
	// told apart from (correlate.Culprit.UndecidedWith).
	UndecidedWith []string `json:"undecided_with,omitempty"`
	// UndecidedWhy is why its group is undecided (correlate.UndecidedWhy).
	UndecidedWhy *jsonUndecidedWhy `json:"undecided_why,omitempty"`
}

// jsonUndecidedWhy is correlate.UndecidedWhy: rule "median" (next_work
// at least half top_work) or "episodes" (top did less than twice next's
// work in not_twice of the shared episodes both are credited with);
// work is the median over credits of I/O plus memory taken, bytes.
type jsonUndecidedWhy struct {
	Rule     string `json:"rule"`
	Top      string `json:"top"`
	Next     string `json:"next"`
	TopWork  uint64 `json:"top_work_bytes"`
	NextWork uint64 `json:"next_work_bytes"`
	NotTwice int    `json:"not_twice,omitempty"`
	Shared   int    `json:"shared,omitempty"`
}

// jsonAB is ab's report's counts (latency.ABSummary): complete
// requests, failed (connect, receive, length, exceptions) and non-2xx.
type jsonAB struct {
	Complete int `json:"complete"`
	Failed   int `json:"failed"`
	Non2xx   int `json:"non2xx"`
}

// jsonVictimReads is correlate.VictimReads.
type jsonVictimReads struct {
	Program  string `json:"program"`
	Episodes int    `json:"episodes"`
	Of       int    `json:"of"`
}

// jsonProof is correlate.Proof with firings_note, the prose of its
// firings_unused.
type jsonProof struct {
	*correlate.Proof
	FiringsNote string `json:"firings_note,omitempty"`
}

// jsonNotRun is a job scheduled near episodes that did not run, or
// that ran only outside the --cgroup group analysed (outside_scope).
type jsonNotRun struct {
	Name         string                 `json:"name"`
	Kind         correlate.NotNamedKind `json:"kind,omitempty"`
	Reason       string                 `json:"reason"`
	OutsideScope *jsonRanOutside        `json:"outside_scope,omitempty"`
	Ran          *jsonRanUnnamed        `json:"ran,omitempty"`
	FiringsNear  int                    `json:"firings_near,omitempty"`
	Cgroup       string                 `json:"cgroup,omitempty"`
}

// jsonRanUnnamed is correlate.RanUnnamed: what a job that ran in the
// scope did in the episodes, though not named.
type jsonRanUnnamed struct {
	Processes int      `json:"processes"`
	Episodes  int      `json:"episodes"`
	Of        int      `json:"episodes_total"`
	MaxBytes  uint64   `json:"max_bytes"`
	MaxShare  float64  `json:"max_share"`
	Credited  int      `json:"credited"`
	P         *float64 `json:"p,omitempty"`
	Share     *float64 `json:"share,omitempty"`
	Late      bool     `json:"late,omitempty"`
	LeadS     *float64 `json:"lead_s,omitempty"`
	// RodeWith and WorkRatio (kind rode_along): the job of its wake-up
	// that stood out, and its own median work over that job's.
	RodeWith  string  `json:"rode_with,omitempty"`
	WorkRatio float64 `json:"work_ratio,omitempty"`
}

// jsonRanOutside is correlate.RanOutside.
type jsonRanOutside struct {
	Group     string   `json:"group"`
	Cgroups   []string `json:"cgroups"`
	Processes int      `json:"processes"`
	Episodes  int      `json:"episodes"`
	Bytes     uint64   `json:"bytes"`
}

// signalScope is whose counters signal s read (jsonSignal.Scope).
func signalScope(r *correlate.Result, s correlate.Signal) string {
	if s != correlate.PSISome && s != correlate.PSIFull {
		return string(correlate.PSIHost)
	}
	if r.PSIScope == correlate.PSIAuto {
		return string(correlate.PSIHost)
	}
	return string(r.PSIScope)
}

// share is n/of rounded to 0.001, nil when of is 0.
func share(n, of int) *float64 {
	if of <= 0 {
		return nil
	}
	v := math.Round(float64(n)/float64(of)*1000) / 1000
	return &v
}

type jsonTotals struct {
	DurationS       float64    `json:"duration_s"`
	Requests        int        `json:"requests"`
	Errors          int        `json:"errors"`
	ErrorIntervals  int        `json:"error_intervals"`
	LoadFrom        *time.Time `json:"load_from,omitempty"` // first request (or interval with requests)
	LoadTo          *time.Time `json:"load_to,omitempty"`   // last one; requests_per_s is over this span
	RequestsPerS    float64    `json:"requests_per_s"`
	RateFromProbe   bool       `json:"rate_from_probe,omitempty"` // requests_per_s unknown: the probe's own rate
	MeanMS          *float64   `json:"mean_ms"`
	P99MS           *float64   `json:"p99_ms"`
	P99Exact        bool       `json:"p99_exact"`
	MemStallS       float64    `json:"mem_stall_s"`
	CgroupMemStallS float64    `json:"cgroup_mem_stall_s"`
}

func ms(d time.Duration) *float64 {
	v := math.Round(float64(d)/1e3) / 1e3
	return &v
}

func period(r *correlate.Result, p *correlate.Period) *jsonPeriod {
	if p == nil {
		return nil
	}
	return &jsonPeriod{PeriodS: p.Period.Round(time.Millisecond).Seconds(), JitterS: p.Jitter.Round(time.Millisecond).Seconds(),
		Phase: in(r, p.Phase).Round(time.Second), Matched: p.Matched, Expected: p.Expected, Missed: p.Missed,
		Extra: p.Extra, Score: p.Score}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// toJSON converts r to the JSON document's shape.
func toJSON(r correlate.Result) jsonResult {
	t := r.Thresholds
	procs := procTable{rows: map[string]int{}, chains: map[string]int{}}
	j := jsonResult{
		SchemaVersion: JSONSchemaVersion,
		Host:          r.Host, Start: in(&r, r.Start), End: in(&r, r.End), IntervalS: r.Interval.Seconds(),
		Intervals: r.Intervals, HasLatency: r.HasLatency, Stat: string(r.Stat), SpikeRule: r.Spike.String(),
		SpikeIntervals: r.Spikes,
		Thresholds:     jsonThresh{t.PSISome, t.PSIFull, t.LRUDrop, t.LRUDropMin, t.Refault, t.DirectReclaim, t.LimitReclaim, t.DiskIO, t.IOTime, t.SwapOut, t.MADFactor},
		Baselines:      map[string]float64{},
		Period:         period(&r, r.Period), SpikePeriod: period(&r, r.SpikePeriod),
		Episodes: []jsonEpisode{}, Spikes: []jsonSpike{}, Require: []string{}, Culprits: []jsonCulprit{}, Undecided: []jsonCulprit{}, Warnings: warningTexts(r.Warnings, r.Location),
		WarningDetails: nonNil(r.Warnings),
		RecordingLacks: nonNil(r.Lacks),
		Victim:         victimJSON(&r),
		CgroupLimit:    r.CgroupLimit, CgroupLimitBytes: r.CgroupLimitBytes,
		Verdict:      verdictLine(&r),
		MemoryGrowth: mem.DescribeGrowth(r.Growth),
		OOMKills:     append([]correlate.OOMKill{}, r.OOMKills...),
		IOBursts:     append([]correlate.IOBurst{}, r.IOBursts...),
		Sustained:    r.Sustained, Failing: r.Failing, NotRun: []jsonNotRun{},
		ProcessesRecorded: r.ProcessesRecorded, ChainTraced: r.ChainTraced,
	}
	if r.HasLatency {
		j.LatencyBaseline = ms(r.LatencyBaseline)
	}
	j.Catalogue = catalogueRates(r.Catalogue)
	for s, v := range r.Baselines {
		j.Baselines[string(s)] = finite(v)
	}
	for i := range r.Episodes {
		j.Episodes = append(j.Episodes, episodeJSON(&r, &r.Episodes[i], &procs))
	}
	j.Procs, j.Ancestries = nonNil(procs.procs), nonNil(procs.ancestries)
	for _, sp := range r.LoneSpikes {
		j.Spikes = append(j.Spikes, jsonSpike{Start: in(&r, sp.Start), End: in(&r, sp.End), LatencyMS: ms(sp.LatencyPeak)})
	}
	for _, s := range r.Require {
		j.Require = append(j.Require, string(s))
	}
	for _, nr := range r.NotRun {
		j.NotRun = append(j.NotRun, notRunJSON(nr))
	}
	for i := range r.Culprits {
		j.Culprits = append(j.Culprits, culpritJSON(&r, &r.Culprits[i]))
	}
	if v := r.VictimReads; v != nil {
		j.VictimReads = &jsonVictimReads{Program: v.Program, Episodes: v.Episodes, Of: v.Of}
	}
	if a := r.AB; a != nil {
		j.AB = &jsonAB{Complete: a.Complete, Failed: a.Failed, Non2xx: a.Non2xx}
	}
	for i := range r.Undecided {
		j.Undecided = append(j.Undecided, culpritJSON(&r, &r.Undecided[i]))
	}
	j.Totals = totalsJSON(&r)
	return j
}

// episodeJSON is episode e of r in the JSON; its started and exited
// processes are entered in procs, the JSON's one table of processes.
func episodeJSON(r *correlate.Result, e *correlate.Episode, procs *procTable) jsonEpisode {
	je := jsonEpisode{Index: e.Index, Time: in(r, rowTime(e)), Start: in(r, e.Start), End: in(r, e.End), DurationS: e.End.Sub(e.Start).Seconds(),
		Signals: []jsonSignal{}, Spike: e.Spike, Processes: nonNil(e.Processes), Started: procs.refs(e.Started),
		Exited: procs.refs(e.Exited), Culprit: e.Culprit, Onset: e.Onset, Chain: e.Chain, VictimWaits: e.VictimWaits,
		ReapedBytes: e.ReapedBytes, UnattributedReapedBytes: e.UnattributedReapedBytes}
	je.Catalogue = make(map[string]jsonRate, len(e.Catalogue))
	for _, c := range e.Catalogue {
		je.Catalogue[c.Signal.RateKey()] = jsonRate{Mean: finitePtr(c.Mean), Peak: finitePtr(c.Peak)}
	}
	for _, s := range e.Signals {
		je.Signals = append(je.Signals, jsonSignal{string(s.Signal), finite(s.Peak), finite(s.Baseline), s.Signal.Unit(), signalScope(r, s.Signal)})
	}
	if e.LatencyPeak > 0 {
		je.LatencyMS = ms(e.LatencyPeak)
	}
	if e.Spike {
		from, to := in(r, e.SpikeStart), in(r, e.SpikeEnd)
		je.SpikeStart, je.SpikeEnd = &from, &to
	}
	return je
}

// notRunJSON is a job of the inventory that is not a culprit, with why.
func notRunJSON(nr correlate.NotRun) jsonNotRun {
	jn := jsonNotRun{Name: nr.Name, Kind: nr.Kind, Reason: notRunReason(nr), FiringsNear: nr.FiringsNear, Cgroup: nr.Cgroup}
	if u := nr.Ran; u != nil {
		jn.Ran = &jsonRanUnnamed{Processes: u.Processes, Episodes: u.Episodes, Of: u.Of, MaxBytes: u.MaxBytes, MaxShare: u.MaxShare,
			Credited: u.Credited, Late: u.Late, LeadS: u.Lead, RodeWith: u.RodeWith, WorkRatio: u.WorkRatio}
		if u.Credited > 0 {
			jn.Ran.P, jn.Ran.Share = &u.P, &u.Share
		}
	}
	if o := nr.OutsideScope; o != nil {
		jn.OutsideScope = &jsonRanOutside{Group: o.Group, Cgroups: o.Cgroups, Processes: o.Processes, Episodes: o.Episodes, Bytes: o.Bytes}
	}
	return jn
}

// culpritJSON is culprit c of r in the JSON.
func culpritJSON(r *correlate.Result, c *correlate.Culprit) jsonCulprit {
	jc := jsonCulprit{Rank: c.Rank, Name: c.Name, Kind: c.Kind, Confidence: c.Confidence, ConfidenceLabel: c.ConfidenceLabel(),
		EpisodesExplained: c.EpisodesExplained, EpisodesTotal: c.EpisodesTotal, EpisodeShare: share(c.EpisodesExplained, c.EpisodesTotal),
		SpikesExplained: spikesExplained(r, c),
		FiringsMatched:  c.FiringsMatched, Firings: c.Firings, FiringShare: share(c.FiringsMatched, c.Firings),
		PeriodS:  c.Period.Seconds(),
		Episodes: nonNil(c.Episodes), Processes: nonNil(c.Processes), BytesPerEpisode: c.BytesPerEpisode,
		Evidence: nonNil(evidence(r, c)), Advice: advice(c), Missing: c.Missing, UndecidedWith: c.UndecidedWith}
	if w := c.Why; w != nil {
		jc.UndecidedWhy = &jsonUndecidedWhy{Rule: w.Rule, Top: w.Top, Next: w.Next, TopWork: w.TopWork, NextWork: w.NextWork, NotTwice: w.NotTwice, Shared: w.Shared}
	}
	if c.Proof != nil {
		jc.Proof = &jsonProof{Proof: c.Proof, FiringsNote: firingsNote(c.Proof.FiringsUnused, c.Job)}
	}
	if jb := c.Job; jb != nil {
		jc.Source, jc.Unit, jc.Command, jc.Schedule, jc.File = string(jb.Source), jb.Unit, jb.Command, jb.Schedule, jb.File
	}
	return jc
}

// totalsJSON is r's totals (requests, latency, stall time) in the JSON.
func totalsJSON(r *correlate.Result) jsonTotals {
	tt := r.Totals
	jt := jsonTotals{DurationS: tt.Duration.Seconds(), Requests: tt.Requests, Errors: tt.Errors, ErrorIntervals: tt.ErrorIntervals, RateFromProbe: tt.RateFromProbe,
		RequestsPerS: math.Round(tt.RequestsPerSec*1000) / 1000, P99Exact: tt.P99Exact,
		MemStallS: tt.MemStall.Round(time.Millisecond).Seconds(), CgroupMemStallS: tt.CgroupMemStall.Round(time.Millisecond).Seconds()}
	if !tt.LoadFrom.IsZero() {
		from, to := in(r, tt.LoadFrom), in(r, tt.LoadTo)
		jt.LoadFrom, jt.LoadTo = &from, &to
	}
	if tt.Requests > tt.Errors { // some request succeeded: a latency to show
		jt.MeanMS, jt.P99MS = ms(tt.Mean), ms(tt.P99)
	}
	return jt
}

// verdictLine is the verdict in one sentence; a failing load leads it.
func verdictLine(r *correlate.Result) string {
	v := verdictCore(r)
	if r.Failing != nil {
		return "load failing; " + v
	}
	return v
}

func verdictCore(r *correlate.Result) string {
	switch {
	case len(r.Episodes) == 0 && r.Sustained != nil:
		return "sustained memory pressure"
	case len(r.Episodes) == 0:
		return "no episode"
	case len(r.Culprits) == 0 && len(r.Undecided) > 0:
		return "undecided between " + undecidedNames(r, "and") + ", fired together: they explain " + strconv.Itoa(r.Undecided[0].EpisodesExplained) + " of " +
			strconv.Itoa(r.Undecided[0].EpisodesTotal) + " episodes; correlation cannot tell which of them took the memory"
	case len(r.Culprits) == 0:
		return "no culprit"
	}
	c := &r.Culprits[0]
	if c.Kind == correlate.KindUnknown && unseenIO(c) != "" {
		return "cannot know: per-process I/O missing; a recurrence explains " + strconv.Itoa(c.EpisodesExplained) + " of " +
			strconv.Itoa(c.EpisodesTotal) + " episodes"
	}
	return c.Name + " (" + string(c.Kind) + ") explains " + strconv.Itoa(c.EpisodesExplained) + " of " +
		strconv.Itoa(c.EpisodesTotal) + " episodes"
}

func renderJSON(w io.Writer, r correlate.Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(toJSON(r))
}

// renderCSV writes one row per episode; a signal's cell holds its peak (in
// the unit of the column name) when the episode raised it, else is empty,
// but for psi_some_share and psi_full_share, which hold the episode's
// peak whenever the stall was recorded.
func renderCSV(w io.Writer, r correlate.Result) error {
	cw := csv.NewWriter(w)
	hdr := []string{"index", "start", "end", "duration_s", "spike", "latency_ms"}
	cols := map[correlate.Signal]string{
		correlate.PSISome: "psi_some_share", correlate.PSIFull: "psi_full_share", correlate.LRUDrop: "lru_drop_bytes_per_s",
		correlate.Refault:       "refault_pages_per_s",
		correlate.DirectReclaim: signal.DirectReclaim.JSONKey(), correlate.LimitReclaim: signal.LimitReclaim.JSONKey(),
		correlate.DiskIO: "disk_io_bytes_per_s", correlate.IOTime: "io_time_s_per_s", correlate.SwapOut: "swap_out_bytes_per_s",
	}
	for _, s := range correlate.AllSignals {
		hdr = append(hdr, cols[s])
	}
	hdr = append(hdr, "culprit", "top_process", "top_process_unit", "top_process_bytes")
	if err := cw.Write(hdr); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for i := range r.Episodes {
		e := &r.Episodes[i]
		lat := ""
		if e.LatencyPeak > 0 {
			lat = f(*ms(e.LatencyPeak))
		}
		row := []string{strconv.Itoa(e.Index), in(&r, e.Start).Format(time.RFC3339), in(&r, e.End).Format(time.RFC3339),
			f(e.End.Sub(e.Start).Seconds()), strconv.FormatBool(e.Spike), lat}
		for _, s := range correlate.AllSignals {
			v := ""
			if p, ok := e.Has(s); ok {
				v = csvNumber(p.Peak)
			} else if k := slices.Index([]correlate.Signal{correlate.PSISome, correlate.PSIFull}, s); k >= 0 && k < len(e.Stall) && !math.IsNaN(e.Stall[k]) {
				// The stall is known even where it did not rise: a blank
				// psi_some beside a raised psi_full would read as 0.
				v = csvNumber(e.Stall[k])
			}
			row = append(row, v)
		}
		row = append(row, e.Culprit)
		if len(e.Processes) > 0 {
			p := e.Processes[0]
			row = append(row, p.Comm, p.Unit, strconv.FormatUint(p.Bytes(), 10))
		} else {
			row = append(row, "", "", "")
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// csvNumber writes v without an exponent: whole numbers from 1000 up (bytes
// and pages per second), four decimals below (shares, seconds per second).
func csvNumber(v float64) string {
	if math.Abs(v) >= 1000 {
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	}
	return strconv.FormatFloat(math.Round(v*1e4)/1e4, 'f', -1, 64)
}

// finite maps NaN and ±Inf, which JSON cannot carry, to 0. correlate never
// reports an unknown value as a peak; this only keeps a bad recording from
// failing the whole document.
func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// finitePtr is &v, nil for NaN or ±Inf: unknown is null, never 0.
func finitePtr(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// catalogueRates is cs as JSON, [] when there is none.
func catalogueRates(cs []correlate.CatalogueRate) []jsonCatalogueRate {
	out := make([]jsonCatalogueRate, 0, len(cs))
	for _, c := range cs {
		out = append(out, jsonCatalogueRate{Name: c.Signal.Name, Key: c.Signal.RateKey(),
			Unit: c.Signal.RateUnit(), Mean: finitePtr(c.Mean), Peak: finitePtr(c.Peak), Title: c.Signal.Title})
	}
	return out
}
