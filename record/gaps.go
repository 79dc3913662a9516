package record

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/memdiag/memdiag/internal/english"
)

// Gaps collects what a recording lacks, sample by sample, so that
// `memdiag analyze` and `memdiag gate --recording` can say it before any
// verdict: a signal that was not recorded is unknown, never "no
// pressure". Feed it every sample with Add, then ask Lines and Abnormal.
type Gaps struct {
	h       Header
	samples int
	last    time.Time

	noPSI int // samples without memory PSI of the recording's scope

	// The sample where the most processes' /proc/PID/io was unreadable.
	denied, listed int
	// activity counts the samples with any process, disk or event data:
	// none in a recording by gate, which samples pressure only.
	activity int

	eventsLost uint64 // process events lost (kernel or memdiag's buffer)
	// overruns: ENOBUFS seen on an events socket. The kernel's count of
	// what it dropped (LostKernel, from the connector's per-CPU sequence
	// gaps) misses a CPU none of whose events was read before the
	// overflow: no earlier number to measure its gap from.
	overruns  uint64
	eventsErr string // a reader that stopped

	// Gap records (Sample.Gap): how many, the samples late and missed,
	// the time unseen, the longest, and reasons other than the
	// sampler's.
	gaps, late, missed int
	unseen             time.Duration
	longest            *Gap
	reasons            []string
}

// NewGaps starts the accounting for a recording with header h.
func NewGaps(h Header) *Gaps { return &Gaps{h: h} }

// Add accounts for one sample.
func (g *Gaps) Add(s *Sample) {
	g.samples++
	if s.Time.After(g.last) {
		g.last = s.Time
	}
	// The PSI of the recording's scope: its --cgroup group's when it has
	// one (what analyze and gate read by default), else the host's.
	p := s.PSI
	if g.h.Cgroup != "" {
		p = s.CgroupPSI
	}
	if p == nil || p.Memory == nil {
		g.noPSI++
	}
	if s.Scan != nil || len(s.Procs)+len(s.Disks)+len(s.Events) > 0 {
		g.activity++
	}
	if st := s.Scan; st != nil && st.Denied > g.denied {
		g.denied, g.listed = st.Denied, st.Processes
	}
	if gp := s.Gap; gp != nil {
		g.addGap(gp)
	}
	if es := s.EventStats; es != nil {
		g.eventsLost += es.LostKernel + es.LostBuffer
		g.overruns += es.Overruns
		if es.Error != "" && g.eventsErr == "" {
			g.eventsErr = es.Error
		}
	}
}

func (g *Gaps) addGap(gp *Gap) {
	g.gaps++
	g.missed += gp.Missed
	if gp.Late > 0 {
		g.late++
	}
	u := gp.Unseen(g.h.Interval)
	g.unseen += u
	if g.longest == nil || u > g.longest.Unseen(g.h.Interval) {
		g.longest = gp
	}
	for r := range strings.SplitSeq(gp.Reason, "; ") {
		if r != "" && r != GapLate && r != GapMissed && !slices.Contains(g.reasons, r) {
			g.reasons = append(g.reasons, r)
		}
	}
}

// GapLine states the samples' gap records: "3 gaps, 14 s unseen: …";
// "" when they have none. Lines includes it; a live gate, which has no
// recording to lack anything else, says it alone.
func (g *Gaps) GapLine() string {
	if g.gaps == 0 {
		return ""
	}
	var what []string
	if g.late > 0 {
		what = append(what, english.Count(g.late, "sample")+" more than half an interval late")
	}
	if g.missed > 0 {
		what = append(what, fmt.Sprintf("%d %s", g.missed, english.Plural(g.missed, "sample")+" missed"))
	}
	what = append(what, g.reasons...)
	l := fmt.Sprintf("%s, %s unseen: %s", english.Count(g.gaps, "gap"), seconds(g.unseen), strings.Join(what, ", "))
	if lg := g.longest; lg != nil {
		l += fmt.Sprintf("; the longest %s without a sample, from %s to %s", seconds(lg.End.Sub(lg.Start)),
			lg.Start.Format("2006-01-02 15:04:05"), lg.End.Format("15:04:05 MST"))
	}
	why := "the recorder was stopped, starved of CPU or blocked; "
	if len(g.reasons) > 0 {
		why = ""
	}
	return l + " (" + why + "what happened in a gap is averaged over it)"
}

// seconds says a duration in seconds, to 0.1 s below 10 s.
func seconds(d time.Duration) string {
	if d < 10*time.Second {
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return fmt.Sprintf("%.0f s", d.Seconds())
}

// Gaps is how many gap records the samples carried, how many samples
// they say were late and missed, and the time unseen (Gap.Unseen).
func (g *Gaps) Gaps() (gaps, late, missed int, unseen time.Duration) {
	return g.gaps, g.late, g.missed, g.unseen
}

// Samples is how many samples were added.
func (g *Gaps) Samples() int { return g.samples }

// Abnormal says why the recording did not end cleanly — no end line (the
// recorder was killed, or the disk filled), a last line cut short, fewer
// samples than its end line counts, damaged lines skipped in the middle —
// or "" when it did. A gate passes no threshold of an abnormal recording.
func (g *Gaps) Abnormal(end *End, warns []string) string {
	cut, why := g.abnormal(end, warns)
	return strings.Join(append(cut, why...), "; ")
}

// abnormal splits Abnormal's findings into those that mean the recording
// was cut short (its end is missing) and damaged lines in the middle of a
// recording that ends properly, which do not.
func (g *Gaps) abnormal(end *End, warns []string) (cut, damaged []string) {
	bad := damagedLines(warns)
	if end == nil {
		cut = append(cut, "no end line: the recorder was killed, crashed, ran out of disk or is still recording")
	} else if end.Samples > g.samples+len(bad) {
		cut = append(cut, fmt.Sprintf("the end line counts %d samples, %d are readable", end.Samples, g.samples))
	}
	if n := cutLines(warns); n > 0 {
		cut = append(cut, fmt.Sprintf("%d %s cut short", n, english.Plural(n, "line")))
	}
	if n := len(bad); n > 0 {
		at := bad
		if n > 3 {
			at = append(append([]string{}, bad[:3]...), "…")
		}
		damaged = append(damaged, fmt.Sprintf("%d damaged %s skipped (%s), the rest read", n, english.Plural(n, "line"), strings.Join(at, ", ")))
	}
	return cut, damaged
}

// PressureOnly reports whether no sample held process, disk or event
// data (a recording by gate, which samples pressure and vmstat only):
// nothing in it can be named a culprit.
func (g *Gaps) PressureOnly() bool { return g.samples > 0 && g.activity == 0 }

// PressureOnlyLine is what analyze says of such a recording.
const PressureOnlyLine = "no processes, disks or process events recorded (pressure and vmstat only, as `memdiag gate` records): no culprit can be named from it; record with `memdiag watch --out FILE -- CMD` and judge that with `memdiag gate --recording FILE`"

// Lines says what the recording lacks, one finding a line, most
// important first; none for a complete recording of every signal.
func (g *Gaps) Lines(end *End, warns []string) []string {
	var out []string
	cut, damaged := g.abnormal(end, warns)
	switch {
	case len(cut) > 0:
		l := fmt.Sprintf("recording cut short, %s readable: %s", english.Count(g.samples, "sample"), strings.Join(append(cut, damaged...), "; "))
		if end == nil && !g.last.IsZero() {
			l += fmt.Sprintf("; nothing is known after the last sample (%s)", g.last.Format("2006-01-02 15:04:05 MST"))
		}
		out = append(out, l)
	case len(damaged) > 0:
		out = append(out, fmt.Sprintf("recording damaged, %s readable: %s; its end line is there", english.Count(g.samples, "sample"), strings.Join(damaged, "; ")))
	}
	if l := g.GapLine(); l != "" {
		out = append(out, l)
	}
	if g.samples > 0 && g.noPSI > 0 {
		why := ""
		if st, ok := g.collector("psi"); ok && !st.Available && st.Reason != "" {
			why = " (" + st.Reason + ")"
		}
		if g.noPSI == g.samples {
			out = append(out, "no memory PSI"+g.scope()+why+": stall on memory is unknown, not zero; the PSI signals cannot rise and their thresholds cannot be judged")
		} else {
			out = append(out, fmt.Sprintf("no memory PSI%s in %d of %d samples%s", g.scope(), g.noPSI, g.samples, why))
		}
	}
	if g.denied > 0 {
		// Most denied: the recorder lacked root (or CAP_SYS_PTRACE). A
		// few denied: processes even root may not read, such as a
		// sandbox's init; the recording cannot tell which.
		why := "the recorder needs root or CAP_SYS_PTRACE + CAP_DAC_READ_SEARCH"
		if g.denied*2 < g.listed {
			why = "a few processes even root may not read, such as a sandbox's init, or a recorder without CAP_SYS_PTRACE"
		}
		out = append(out, fmt.Sprintf("per-process I/O unreadable for %d of %d processes (/proc/PID/io denied: %s): their I/O is missing from the top processes and the culprits", g.denied, g.listed, why))
	}
	if _, ok := g.collector("procs"); ok {
		switch st, ok := g.collector("events"); {
		case !ok:
			out = append(out, "process events off (watch --events off): processes were seen by polling /proc once per interval; one that started and ended between two samples is missing")
		case !st.Available:
			out = append(out, "process events polled, not from the kernel ("+st.Reason+"): a process that started and ended between two samples is missing")
		}
	}
	if st, ok := g.collector("ebpf-chain"); ok {
		switch {
		case !st.Available:
			out = append(out, "no page-cache chain (eBPF: "+st.Reason+"): culprits are credited by correlation — who did the disk I/O when — not by what their page-cache use cost the victim")
		case st.Reason != "":
			out = append(out, "page-cache chain traced in part: "+st.Reason)
		}
	}
	switch {
	case g.overruns > 0 && g.eventsLost > 0:
		out = append(out, fmt.Sprintf("at least %d process %s lost (socket overrun; the kernel's count leaves out a CPU none of whose events was read before it)", g.eventsLost, english.Plural(int(g.eventsLost), "event")))
	case g.overruns > 0:
		out = append(out, "process events lost (socket overrun; how many is not known)")
	case g.eventsLost > 0:
		out = append(out, fmt.Sprintf("%d process %s lost (socket or buffer overrun)", g.eventsLost, english.Plural(int(g.eventsLost), "event")))
	}
	if g.eventsErr != "" {
		out = append(out, "process events stopped: "+g.eventsErr)
	}
	return out
}

func (g *Gaps) scope() string {
	if g.h.Cgroup != "" {
		return " of cgroup " + g.h.Cgroup
	}
	return ""
}

func (g *Gaps) collector(name string) (CollectorStatus, bool) {
	for _, c := range g.h.Collectors {
		if c.Name == name {
			return c, true
		}
	}
	return CollectorStatus{}, false
}

// NeedSamples returns an error wrapping ErrNoSamples when a recording
// named name, read to its end with n samples, has too few to analyse or
// judge: none (a header only), or one (a rate needs two samples).
func NeedSamples(name string, n int, end *End, warns []string) error {
	switch {
	case n >= 2:
		return nil
	case n == 1:
		return fmt.Errorf("%s: only 1 sample (%w to compare it with: a rate needs two; record for at least two intervals)", name, ErrNoSamples)
	case end != nil:
		return fmt.Errorf("%s: %w: a header and an end line (%q) and nothing between", name, ErrNoSamples, end.Reason)
	case cutLines(warns) > 0:
		return fmt.Errorf("%s: %w: the header, then line 2 cut short (%s)", name, ErrNoSamples, warns[0])
	case len(damagedLines(warns)) > 0:
		return fmt.Errorf("%s: %w: the header, then only damaged lines (%s)", name, ErrNoSamples, warns[0])
	}
	return fmt.Errorf("%s: %w: the header only (the recorder was killed before its first sample, or is still starting)", name, ErrNoSamples)
}

// cutLines counts the reader's warnings about lines cut short: a last
// line without its end, a compressed stream that stops inside a line
// (one that stops after a whole line, without its trailer, cuts none).
func cutLines(warns []string) int {
	n := 0
	for _, w := range warns {
		if strings.Contains(w, warnTruncated) || strings.Contains(w, warnStreamCut) {
			n++
		}
	}
	return n
}

// damagedLines returns the file:line of each line the reader skipped as
// damaged (not JSON, not a sample, over the line limit) while lines after
// it were read.
func damagedLines(warns []string) []string {
	var at []string
	for _, w := range warns {
		if !strings.Contains(w, ": damaged ") && !strings.Contains(w, "(damaged, or not written by memdiag)") {
			continue
		}
		loc, _, _ := strings.Cut(w, ": ")
		at = append(at, loc)
	}
	return at
}
