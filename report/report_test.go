package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/internal/format"
	goldenfile "github.com/memdiag/memdiag/internal/golden"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/timers"
)

// golden compares got with testdata/golden/name, or writes it under
// MEMDIAG_UPDATE_GOLDEN=1.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", "golden", name), string(got))
}

func at(hm string) time.Time {
	t, err := time.Parse("2006-01-02 15:04", "2026-03-15 "+hm)
	if err != nil {
		panic(err)
	}
	return t
}

const mib = 1 << 20

// reference is the reference case of DESIGN.md as a result: the 12:25 row
// with disk I/O only, 12:33 and 13:13 with every signal (pmlogger_check),
// 12:43 with latency, PSI and disk I/O (pmlogger_farm_check).
func reference() correlate.Result {
	sig := func(s correlate.Signal, peak, base float64) correlate.SignalPeak {
		return correlate.SignalPeak{Signal: s, Peak: peak, Baseline: base}
	}
	all := []correlate.SignalPeak{
		sig(correlate.PSISome, 0.23, 0.01), sig(correlate.PSIFull, 0.06, 0), sig(correlate.LRUDrop, 35*mib, 0),
		sig(correlate.Refault, 1800, 20), sig(correlate.DirectReclaim, 900, 0), sig(correlate.DiskIO, 95*mib, 3*mib),
		sig(correlate.IOTime, 1.8, 0.1), sig(correlate.SwapOut, 4*mib, 0),
	}
	pc := correlate.ProcActivity{PID: 4242, Comm: "pmlogger_check", Unit: "pmlogger_check.service", ReadBytes: 300 * mib, WriteBytes: 900 * mib, Started: true}
	pf := correlate.ProcActivity{PID: 4300, Comm: "pmlogger_farm_c", Unit: "pmlogger_farm_check.service", ReadBytes: 100 * mib, WriteBytes: 700 * mib, Started: true}
	web := correlate.ProcActivity{PID: 812, Comm: "webapp", Unit: "webapp.service", WriteBytes: 2 * mib}
	period := 1200.0
	checkJob := &timers.Job{Name: "pmlogger_check.timer", Source: timers.Systemd, File: "lib/systemd/system/pmlogger_check.timer",
		Schedule: []string{"*:13/20"}, PeriodSeconds: &period, Unit: "pmlogger_check.service",
		Command: "/usr/libexec/pcp/bin/pmlogger_check -C", Active: true}
	farmJob := &timers.Job{Name: "pmlogger_farm_check.timer", Source: timers.Systemd, File: "lib/systemd/system/pmlogger_farm_check.timer",
		Schedule: []string{"*:03/20"}, PeriodSeconds: &period, Unit: "pmlogger_farm_check.service",
		Command: "/usr/libexec/pcp/bin/pmlogger_farm_check", Active: true}
	return correlate.Result{
		Host: "web1", Start: at("12:20"), End: at("13:20"), Interval: time.Minute, Location: time.UTC, Intervals: 60,
		HasLatency: true, Stat: correlate.StatP99, Spike: correlate.DefaultSpikeRule, Thresholds: correlate.DefaultThresholds(),
		Baselines:       map[correlate.Signal]float64{correlate.PSISome: 0.01, correlate.DiskIO: 3 * mib},
		LatencyBaseline: 520 * time.Millisecond, Spikes: 4,
		Episodes: []correlate.Episode{
			{Index: 0, Start: at("12:25"), End: at("12:26"), Intervals: 1, Signals: []correlate.SignalPeak{sig(correlate.DiskIO, 40*mib, 3*mib)},
				LatencyPeak: 610 * time.Millisecond, Processes: []correlate.ProcActivity{{PID: 901, Comm: "rsync", ReadBytes: 1200 * mib}}},
			{Index: 1, Start: at("12:33"), End: at("12:35"), Intervals: 2, Signals: all, Spike: true, LatencyPeak: 2500 * time.Millisecond,
				Processes: []correlate.ProcActivity{pc, web}, Started: []correlate.ProcActivity{pc}, Culprit: "pmlogger_check.timer"},
			{Index: 2, Start: at("12:43"), End: at("12:44"), Intervals: 1, Spike: true, LatencyPeak: 2400 * time.Millisecond,
				Signals:   []correlate.SignalPeak{sig(correlate.PSISome, 0.12, 0.01), sig(correlate.DiskIO, 70*mib, 3*mib)},
				Processes: []correlate.ProcActivity{pf}, Started: []correlate.ProcActivity{pf}, Culprit: "pmlogger_farm_check.timer"},
			{Index: 3, Start: at("13:13"), End: at("13:15"), Intervals: 2, Signals: all, Spike: true, LatencyPeak: 2600 * time.Millisecond,
				Processes: []correlate.ProcActivity{pc}, Started: []correlate.ProcActivity{pc}, Culprit: "pmlogger_check.timer"},
		},
		LoneSpikes: []correlate.Spike{{Start: at("12:50"), End: at("12:51"), LatencyPeak: 1400 * time.Millisecond}},
		Culprits: []correlate.Culprit{
			{Rank: 1, Name: "pmlogger_check.timer", Kind: correlate.KindTimer, Job: checkJob, Episodes: []int{1, 3},
				EpisodesExplained: 2, EpisodesTotal: 4, FiringsMatched: 2, Firings: 3, Period: 20 * time.Minute,
				Processes:       []correlate.ProcActivity{{Comm: "pmlogger_check", Unit: "pmlogger_check.service", ReadBytes: 600 * mib, WriteBytes: 1800 * mib}},
				BytesPerEpisode: 1200 * mib, Confidence: 0.72, Lag: time.Minute, Projected: true,
				Proof: &correlate.Proof{ProcessesRecorded: true, Ran: true, FiringsUsed: true, PFiring: 0.031,
					Credits: []correlate.EpisodeCredit{{Episode: 1, Bytes: 1200 * mib, AllBytes: 1202 * mib, Share: 0.998},
						{Episode: 3, Bytes: 1200 * mib, AllBytes: 1200 * mib, Share: 1}},
					FiringsMatched: []time.Time{at("12:33"), at("13:13")}, FiringsMissed: []time.Time{at("12:53")},
					Presence: 0.036, PresentIntervals: 1, OutsideIntervals: 54, EpisodeIntervals: 2.5, EpisodeChance: 0.088, PNull: 0.0077,
					Runs: 2, P: 0.0077, Strength: 0.53, Share: 0.999, Repeat: 0.667, Cap: 1}},
			{Rank: 2, Name: "pmlogger_farm_check.timer", Kind: correlate.KindTimer, Job: farmJob, Episodes: []int{2},
				EpisodesExplained: 1, EpisodesTotal: 4, FiringsMatched: 1, Firings: 3, Period: 20 * time.Minute,
				Processes:       []correlate.ProcActivity{{Comm: "pmlogger_farm_c", Unit: "pmlogger_farm_check.service", ReadBytes: 100 * mib, WriteBytes: 700 * mib}},
				BytesPerEpisode: 800 * mib, Confidence: 0.4},
		},
		Totals: correlate.Totals{Duration: time.Hour, Requests: 289440, RequestsPerSec: 80.4, Mean: 617300 * time.Microsecond,
			P99: 2500 * time.Millisecond, MemStall: 95 * time.Second},
	}
}

func noCause() correlate.Result {
	r := reference()
	for i := range r.Episodes {
		r.Episodes[i].Culprit = ""
	}
	r.Culprits = nil
	r.HasLatency = false
	r.Warnings = []correlate.Warning{{Kind: correlate.WarnNoLatency}}
	return r
}

func TestRenderGolden(t *testing.T) {
	tests := []struct {
		name string
		r    correlate.Result
		f    format.Format
		o    Options
	}{
		{"reference.table.txt", reference(), format.Table, Options{}},
		{"reference-values.table.txt", reference(), format.Table, Options{Values: true}},
		{"reference.md", reference(), format.Markdown, Options{}},
		{"reference.csv", reference(), format.CSV, Options{}},
		{"nocause.table.txt", noCause(), format.Table, Options{}},
		// A 100-column terminal: the culprit column wraps (the goldens
		// above are piped output and keep it whole).
		{"reference.tty100.table.txt", reference(), format.Table, Options{Width: 100}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Render(&b, tt.r, tt.f, tt.o); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(b.String(), "\x1b[") {
				t.Error("colour in output with Color off")
			}
			if tt.o.Width > 0 {
				for i, l := range strings.Split(b.String(), "\n") {
					if n := utf8.RuneCountInString(l); strings.Contains(l, "│") && n > tt.o.Width {
						t.Errorf("table line %d is %d columns wide, want <= %d: %q", i+1, n, tt.o.Width, l)
					}
				}
			}
			golden(t, tt.name, b.Bytes())
		})
	}
}

func TestRenderColor(t *testing.T) {
	var b bytes.Buffer
	if err := Render(&b, reference(), format.Table, Options{Color: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "\x1b[31;1m●") {
		t.Errorf("no red mark with Color on:\n%s", b.String())
	}
}

func TestRenderJSON(t *testing.T) {
	var b bytes.Buffer
	if err := Render(&b, reference(), format.JSON, Options{}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Episodes []struct {
			Start     time.Time `json:"start"`
			End       time.Time `json:"end"`
			Signals   []struct{ Signal string }
			LatencyMS *float64 `json:"latency_ms"`
			Processes []struct {
				Comm       string `json:"comm"`
				Unit       string `json:"unit"`
				WriteBytes uint64 `json:"write_bytes"`
			} `json:"processes"`
		} `json:"episodes"`
		Culprits []struct {
			Name              string   `json:"name"`
			Kind              string   `json:"kind"`
			EpisodesExplained int      `json:"episodes_explained"`
			EpisodesTotal     int      `json:"episodes_total"`
			EpisodeShare      *float64 `json:"episode_share"`
			FiringsMatched    int      `json:"firings_matched"`
			Firings           int      `json:"firings"`
			FiringShare       *float64 `json:"firing_share"`
			Evidence          []string `json:"evidence"`
		} `json:"culprits"`
		Verdict string `json:"verdict"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if len(doc.Episodes) != 4 {
		t.Fatalf("%d episodes, want 4", len(doc.Episodes))
	}
	e := doc.Episodes[1]
	if !e.Start.Equal(at("12:33")) || !e.End.Equal(at("12:35")) || len(e.Signals) != 8 || e.Signals[0].Signal != "psi_some" ||
		e.LatencyMS == nil || *e.LatencyMS != 2500 || e.Processes[0].Comm != "pmlogger_check" ||
		e.Processes[0].Unit != "pmlogger_check.service" || e.Processes[0].WriteBytes != 900*mib {
		t.Errorf("episode 1 = %+v", e)
	}
	if len(doc.Culprits) != 2 || doc.Culprits[0].Name != "pmlogger_check.timer" || doc.Culprits[0].Kind != "timer" ||
		len(doc.Culprits[0].Evidence) != 5 {
		t.Errorf("culprits = %+v", doc.Culprits)
	}
	// 2 of 4 episodes, 2 of 3 firings, with their shares.
	if c := doc.Culprits[0]; c.EpisodesExplained != 2 || c.EpisodesTotal != 4 || *c.EpisodeShare != 0.5 ||
		c.FiringsMatched != 2 || c.Firings != 3 || *c.FiringShare != 0.667 {
		t.Errorf("culprits = %+v", doc.Culprits)
	}
	if doc.Verdict != "pmlogger_check.timer (timer) explains 2 of 4 episodes" {
		t.Errorf("verdict = %q", doc.Verdict)
	}

	// Empty lists are [] and absent latency is null, so consumers need no
	// special cases.
	b.Reset()
	if err := Render(&b, correlate.Result{Host: "h"}, format.JSON, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"episodes": []`, `"culprits": []`, `"period": null`, `"verdict": "no episode"`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("empty result JSON lacks %s:\n%s", want, b.String())
		}
	}
}

func TestFormats(t *testing.T) {
	for in, want := range map[string]format.Format{"": format.Table, "table": format.Table, "md": format.Markdown, "Markdown": format.Markdown, "json": format.JSON, "csv": format.CSV, "HTML": format.HTML} {
		if got, err := format.Parse(in, Formats); err != nil || got != want {
			t.Errorf("format.Parse(%q, Formats) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := format.Parse("pdf", Formats); err == nil {
		t.Error("format.Parse(pdf, Formats) accepted")
	}
	if err := Render(io.Discard, correlate.Result{}, "pdf", Options{}); !errors.Is(err, format.ErrUnknown) {
		t.Errorf("Render(pdf) = %v, want format.ErrUnknown", err)
	}
}

// The reference case's before/after: 80.4 → 95.9 requests/s and 617.3 →
// 517.5 ms mean once the PCP timers were stopped.
func TestRenderCompare(t *testing.T) {
	before := reference()
	after := correlate.Result{Host: "web1", Start: at("14:00"), End: at("15:00"), Location: time.UTC, HasLatency: true, Intervals: 60,
		Totals: correlate.Totals{Duration: time.Hour, Requests: 345240, RequestsPerSec: 95.9, Mean: 517500 * time.Microsecond,
			P99: 900 * time.Millisecond, MemStall: 4 * time.Second}}
	for f, name := range map[format.Format]string{format.Table: "compare.table.txt", format.CSV: "compare.csv"} {
		var b bytes.Buffer
		if err := RenderCompare(&b, before, after, f, Options{}); err != nil {
			t.Fatal(err)
		}
		golden(t, name, b.Bytes())
	}
	var b bytes.Buffer
	if err := RenderCompare(&b, before, after, format.JSON, Options{}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		ChangePct map[string]*float64 `json:"change_pct"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	// (95.9-80.4)/80.4 = +19.3 %; (517.5-617.3)/617.3 = -16.2 %.
	if r, m := doc.ChangePct["requests_per_s"], doc.ChangePct["mean_ms"]; r == nil || *r != 19.3 || m == nil || *m != -16.2 {
		t.Errorf("change_pct = %v, %v; want +19.3 and -16.2", r, m)
	}
}

// Spikes that recur on their own schedule get their own summary line.
func TestRenderSpikePeriod(t *testing.T) {
	r := reference()
	r.SpikePeriod = &correlate.Period{Period: 20 * time.Minute, Jitter: 40 * time.Second, Matched: 3, Expected: 3}
	var b bytes.Buffer
	if err := Render(&b, r, format.Table, Options{}); err != nil {
		t.Fatal(err)
	}
	want := "Spikes: latency spikes (in episodes and outside them) recur every 20m (±40s): 3 of 3 expected, 0 missed, 0 off schedule\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("output lacks %q:\n%s", want, b.String())
	}
}

// With no episode (watch's summary of a calm run), the spikes that recur
// are spikes outside episodes, never "episodes with a latency spike".
func TestRenderSpikePeriodNoEpisode(t *testing.T) {
	r := reference()
	r.Episodes, r.Culprits, r.Period = nil, nil, nil
	r.LoneSpikes = []correlate.Spike{{Start: at("12:30"), End: at("12:31")}, {Start: at("12:50"), End: at("12:51")}, {Start: at("13:10"), End: at("13:11")}}
	r.SpikePeriod = &correlate.Period{Period: 20 * time.Minute, Jitter: 40 * time.Second, Matched: 3, Expected: 3}
	var b bytes.Buffer
	if err := Render(&b, r, format.Table, Options{}); err != nil {
		t.Fatal(err)
	}
	want := "Spikes: latency spikes outside episodes recur every 20m (±40s): 3 of 3 expected, 0 missed, 0 off schedule\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("output lacks %q:\n%s", want, b.String())
	}
}

// TestTimelineStampsLikeWatch: a timeline row shows the end of its
// episode's first interval, which is the time `memdiag watch` prints on
// that interval's live row (liveRow stamps Interval.End). In reference()
// the 12:33–12:35 episode has two 1m intervals: its row is 12:34, the
// live row of 12:33–12:34; the one-interval episode 12:25–12:26 and the
// spike 12:50–12:51 show 12:26 and 12:51.
func TestTimelineStampsLikeWatch(t *testing.T) {
	var b bytes.Buffer
	if err := Render(&b, reference(), format.Table, Options{}); err != nil {
		t.Fatal(err)
	}
	var times []string
	for _, l := range strings.Split(b.String(), "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[1] == "│" && f[0] != "TIME" {
			times = append(times, f[0])
		}
	}
	if diff := cmp.Diff([]string{"12:26", "12:34", "12:44", "12:51", "13:14"}, times); diff != "" {
		t.Errorf("timeline times (-want +got):\n%s", diff)
	}
	live := liveRow(record.Interval{Start: at("12:33"), End: at("12:34"), Dt: time.Minute}, nil, false)
	if !strings.HasPrefix(live, "12:34:00 ") {
		t.Errorf("live row %q does not start with the interval's end 12:34:00", live)
	}
}

// The advice for a recurrence nobody explains follows what the recording
// lacked: "record again as root" only when it has no per-process data.
func TestAdviceUnknownFollowsWhatIsMissing(t *testing.T) {
	for _, c := range []struct {
		missing []correlate.Missing
		want    string // a phrase the advice must hold
		root    bool   // whether it may say "as root"
	}{
		{[]correlate.Missing{correlate.MissingProcesses}, "record again as root so per-process I/O", true},
		{[]correlate.Missing{correlate.MissingIO}, "no recorded process did the I/O", false},
		{[]correlate.Missing{correlate.MissingEpisodes}, "record longer (at least 10 recurrences, 1m40s)", false},
		{[]correlate.Missing{correlate.MissingIOAccess}, "/proc/PID/io was unreadable", true},
		{[]correlate.Missing{correlate.MissingBusy}, "rsync, which did these episodes' I/O, did as much between them: that I/O does not set the schedule; look at what else recurs every 10s", false},
	} {
		cu := correlate.Culprit{Kind: correlate.KindUnknown, Name: "unknown", Period: 10 * time.Second, EpisodesExplained: 5, Missing: c.missing,
			Programs: []correlate.ProgramCredit{{Program: "rsync", Share: 0.99, Episodes: 5, Of: 5, Unnamed: correlate.UnnamedBusy}}}
		got := strings.Join(advice(&cu), "\n")
		if !strings.Contains(got, c.want) || !c.root && strings.Contains(got, "as root") {
			t.Errorf("missing %v: advice %q; want %q, as root %v", c.missing, got, c.want, c.root)
		}
	}
}

// Two recordings scoped to their --cgroup group: the stall row is the
// group's (4.655 s → 1.312 s, like its episodes 9 → 3), and the host's
// (12.4 s → 699 ms) is labelled as the host's, never shown as the scope's.
func TestRenderCompareCgroupScope(t *testing.T) {
	ep := make([]correlate.Episode, 9)
	before := correlate.Result{Host: "trial", Start: at("22:00"), End: at("22:10"), Location: time.UTC, PSIScope: correlate.PSICgroup,
		Episodes: ep, Totals: correlate.Totals{Duration: 10 * time.Minute, MemStall: 12400 * time.Millisecond, CgroupMemStall: 4655 * time.Millisecond}}
	after := correlate.Result{Host: "trial", Start: at("23:00"), End: at("23:10"), Location: time.UTC, PSIScope: correlate.PSICgroup,
		Episodes: ep[:3], Totals: correlate.Totals{Duration: 10 * time.Minute, MemStall: 699 * time.Millisecond, CgroupMemStall: 1312 * time.Millisecond}}
	var b bytes.Buffer
	if err := RenderCompare(&b, before, after, format.Table, Options{}); err != nil {
		t.Fatal(err)
	}
	rows := compareRows(b.String())
	// Both 10 min: (1.312-4.655)/4.655 = -71.8 %; (0.699-12.4)/12.4 =
	// -94.4 %; shares 4.655/600 = 0.8 %, 1.312/600 = 0.2 %, 12.4/600 =
	// 2.1 %, 0.699/600 = 0.1 %.
	want := map[string][]string{
		"Episodes (cgroup)":       {"9", "3", "-66.7%"},
		"Memory stall % (cgroup)": {"0.8% (4.7s)", "0.2% (1.3s)", "-71.8%"},
		"Memory stall % (host)":   {"2.1% (12.4s)", "0.1% (699ms)", "-94.4%"},
	}
	for k, w := range want {
		if got := rows[k]; !slices.Equal(got, w) {
			t.Errorf("row %q = %q; want %q\n%s", k, got, w, b.String())
		}
	}
	// The same stall in an after run half as long is twice the share of
	// its time: the change compares shares, 0.699/300 = 0.233 % against
	// 2.07 %, not 699 ms against 12.4 s.
	after.Totals.Duration /= 2
	b.Reset()
	if err := RenderCompare(&b, before, after, format.Table, Options{}); err != nil {
		t.Fatal(err)
	}
	bs, as := before.Totals.MemStall.Seconds()/600, after.Totals.MemStall.Seconds()/300
	wantChg := fmt.Sprintf("%+.1f%%", (as-bs)/bs*100)
	found := false
	for _, line := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "Memory stall % (host)") {
			found = strings.HasSuffix(strings.TrimSpace(line), wantChg) && strings.Contains(line, "0.2% (699ms)")
		}
	}
	if !found || wantChg != "-88.7%" {
		t.Errorf("after run of 5 min: want 0.2%% (699ms) and change %s (-88.7%%):\n%s", wantChg, b.String())
	}
}

// Under a cgroup scope, "no job:" names a process that can cause the
// group's reclaim; another tenant's only when none can, and flagged.
func TestCulpritCellOutsideScope(t *testing.T) {
	cached := correlate.ProcActivity{Comm: "cached", WriteBytes: 7 << 30, OutsideScope: true}
	job := correlate.ProcActivity{Comm: "mdjob.sh", WriteBytes: 40 << 20}
	r := &correlate.Result{PSIScope: correlate.PSICgroup}
	e := &correlate.Episode{Processes: []correlate.ProcActivity{cached, job}}
	if got, want := culpritCell(r, e), "no job: mdjob.sh 40.0 MiB"; got != want {
		t.Errorf("cell %q; want %q", got, want)
	}
	e.Processes = e.Processes[:1]
	if got, want := culpritCell(r, e), "no job: cached 7.0 GiB (outside the cgroup)"; got != want {
		t.Errorf("cell %q; want %q", got, want)
	}
}

// The children a process reaped unseen are named with the parent's PID
// in the CULPRIT column: which sh.
func TestCulpritCellReaped(t *testing.T) {
	kids := correlate.ProcActivity{PPID: 4100, Comm: "exited threads or children of sh", Program: "exited threads or children of sh", WriteBytes: 12 << 20, Reaped: true}
	r := &correlate.Result{}
	e := &correlate.Episode{Processes: []correlate.ProcActivity{kids}}
	if got, want := culpritCell(r, e), "no job: exited threads or children of sh 4100 12.0 MiB"; got != want {
		t.Errorf("cell %q; want %q", got, want)
	}
	r.Culprits = []correlate.Culprit{{Name: "job.timer", Processes: []correlate.ProcActivity{{Comm: "exited threads or children of sh", WriteBytes: 12 << 20}}}}
	e.Culprit = "job.timer"
	if got, want := culpritCell(r, e), "job.timer: exited threads or children of sh 4100 12.0 MiB"; got != want {
		t.Errorf("cell %q; want %q", got, want)
	}
	// A process culprit named sh that did its I/O through the children
	// it reaped (a real --events off run: "sh" alone in the cell).
	r.Culprits = []correlate.Culprit{{Name: "sh", Kind: correlate.KindProcess, Processes: []correlate.ProcActivity{{PID: 4100, Comm: "sh", Program: "sh", ReadBytes: 12 << 20}}}}
	e.Culprit = "sh"
	if got, want := culpritCell(r, e), "sh: exited threads or children of sh 4100 12.0 MiB"; got != want {
		t.Errorf("cell %q; want %q", got, want)
	}
}

// Under a cgroup scope only PSI is the group's: the legend, the wide
// layout and the JSON say that the other marks (disk I/O, swap-out …)
// are host-wide; with the host's scope the legend is unchanged.
func TestHostWideMarksUnderCgroupScope(t *testing.T) {
	r := reference()
	r.PSIScope = correlate.PSICgroup
	render := func(f format.Format, o Options) string {
		var b bytes.Buffer
		if err := Render(&b, r, f, o); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	want := "SIGNALS: PSI memory PSI of the recorded cgroup rose. The others are host-wide counters (the whole machine's, every cgroup's together, not this cgroup's alone): " +
		"LRU file LRU shrank, RF refaults rose, DR direct reclaim rose, LR cgroup-limit reclaim rose, IO disk I/O rose, IOT I/O time rose, SW swap-out rose.\n"
	if got := render(format.Table, Options{}); !strings.Contains(got, want) {
		t.Errorf("legend lacks %q:\n%s", want, got)
	}
	wantValues := "PSI UP is the memory PSI of the recorded cgroup; LRU DOWN, REFAULT, DIRECT RECL, LIMIT RECL, DISK I/O, I/O TIME UP, SWAP UP are host-wide, the whole machine's and not the cgroup's alone.\n"
	if got := render(format.Table, Options{Values: true}); !strings.Contains(got, wantValues) {
		t.Errorf("wide layout lacks %q:\n%s", wantValues, got)
	}
	var j struct {
		Episodes []struct {
			Signals []struct{ Signal, Scope string } `json:"signals"`
		} `json:"episodes"`
	}
	if err := json.Unmarshal([]byte(render(format.JSON, Options{})), &j); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range j.Episodes[1].Signals {
		got[s.Signal] = s.Scope
	}
	wantScope := map[string]string{"psi_some": "cgroup", "psi_full": "cgroup", "lru_drop": "host", "refault": "host",
		"direct_reclaim": "host", "disk_io": "host", "io_time": "host", "swap_out": "host"}
	if d := cmp.Diff(wantScope, got); d != "" {
		t.Errorf("episode 2's signal scopes (-want +got):\n%s", d)
	}
	r.PSIScope = correlate.PSIHost
	if got := render(format.Table, Options{}); !strings.Contains(got, "SIGNALS: PSI memory PSI rose, LRU") || strings.Contains(got, "host-wide") {
		t.Errorf("host scope: legend changed:\n%s", got)
	}
}

// Counts over recordings of different lengths are compared as rates: the
// same 4 spike intervals and 4 episodes in a run twice as long are half
// as many per interval and per hour, not "+0.0%"; the raw episode count
// then shows no change.
func TestRenderCompareUnevenLengths(t *testing.T) {
	before := reference() // 1 h at 1 min: 4 spike intervals, 4 episodes
	after := reference()
	after.Start, after.End, after.Intervals, after.Totals.Duration = at("14:00"), at("16:00"), 120, 2*time.Hour
	var b bytes.Buffer
	if err := RenderCompare(&b, before, after, format.Table, Options{}); err != nil {
		t.Fatal(err)
	}
	rows := compareRows(b.String())
	want := map[string][]string{
		"Recording length":  {"1h", "2h", "+100.0%"},
		"Spike intervals %": {"6.7% (4)", "3.3% (4)", "-50.0%"},
		"Episodes":          {"4", "4", ""},
		"Episodes per hour": {"4.0", "2.0", "-50.0%"},
	}
	for k, w := range want {
		if got := rows[k]; !slices.Equal(got, w) {
			t.Errorf("row %q = %q; want %q\n%s", k, got, w, b.String())
		}
	}
	b.Reset()
	if err := RenderCompare(&b, before, after, format.JSON, Options{}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		After     struct{ Metrics map[string]*float64 } `json:"after"`
		ChangePct map[string]*float64                   `json:"change_pct"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if c := doc.ChangePct["episodes"]; c != nil {
		t.Errorf("change_pct.episodes = %v; want null (different lengths)", *c)
	}
	if c := doc.ChangePct["spike_intervals_pct"]; c == nil || *c != -50 {
		t.Errorf("change_pct.spike_intervals_pct = %v; want -50", c)
	}
	if v := doc.After.Metrics["spike_intervals_pct"]; v == nil || math.Abs(*v-100.0/30) > 1e-9 {
		t.Errorf("after spike_intervals_pct = %v; want 3.33", v)
	}
}

// compareRows is compare's table by row label: before, after, change.
func compareRows(out string) map[string][]string {
	rows := map[string][]string{}
	for _, line := range strings.Split(out, "\n") {
		cells := strings.Split(line, "│")
		if len(cells) == 4 {
			for i := range cells {
				cells[i] = strings.TrimSpace(cells[i])
			}
			rows[cells[0]] = cells[1:]
		}
	}
	return rows
}

// An unknown recurrence in a recording whose per-process I/O was
// unreadable (trial s7 F-11): the evidence and the verdict say memdiag
// cannot tell, not that no process explains it.
func TestUnknownWithUnreadableIOCannotTell(t *testing.T) {
	cu := correlate.Culprit{Kind: correlate.KindUnknown, Name: "unknown", Period: 20 * time.Second, EpisodesExplained: 4, EpisodesTotal: 4,
		Missing: []correlate.Missing{correlate.MissingIOAccess, correlate.MissingEvents}}
	r := &correlate.Result{Episodes: make([]correlate.Episode, 4), Culprits: []correlate.Culprit{cu}}
	ev := strings.Join(evidence(r, &r.Culprits[0]), "\n")
	if strings.Contains(ev, "no timer, cron job or process explains it") || !strings.Contains(ev, "cannot tell which timer, cron job or process it is: per-process I/O was unreadable") {
		t.Errorf("evidence %q; want \"cannot tell …: per-process I/O was unreadable\", not \"no … explains it\"", ev)
	}
	if got, want := verdictCore(r), "cannot know: per-process I/O missing; a recurrence explains 4 of 4 episodes"; got != want {
		t.Errorf("verdict %q, want %q", got, want)
	}
	// With readable I/O the "no" stands.
	r.Culprits[0].Missing = []correlate.Missing{correlate.MissingIO}
	if ev := evidence(r, &r.Culprits[0]); !slices.Contains(ev, "no timer, cron job or process explains it") {
		t.Errorf("evidence %q; want the plain \"no\"", ev)
	}
}

// Trial s7 F-13: the unseen-children note told a root user to "run as
// root for taskstats"; the I/O there is mostly exited threads', which no
// exit record ever names.
func TestUnseenChildrenNoRootHint(t *testing.T) {
	var b strings.Builder
	writeUnseenChildren(&b, []record.ProcTotal{{PID: 16960, Comm: "python3", ReadBytes: 3879731}})
	got := b.String()
	if strings.Contains(got, "run as root") || !strings.Contains(got, "a thread's exit is never recorded") ||
		!strings.Contains(got, "threads/children of python3           16960   3.7 MiB read") {
		t.Errorf("note:\n%s\nwant no \"run as root\", the thread reason and python3 16960's 3.7 MiB", got)
	}
}
