package correlate

import "github.com/memdiag/memdiag/signal"

// A Warning is something the analysis could not do, or did with less than
// it needed, as a kind and the fields it names; package report writes its
// sentence (report writes them), so correlate returns no English.
type Warning struct {
	Kind WarningKind `json:"kind"`
	// LatencyFile is WarnLatencyFileEmpty's file (record.Header.LatencyFile),
	// Probe WarnProbeEmpty's URL (record.Header.Probe) and Scope
	// WarnNoPSI's PSI scope (Result.PSIScope).
	LatencyFile string   `json:"latency_file,omitempty"`
	Probe       string   `json:"probe,omitempty"`
	Scope       PSIScope `json:"scope,omitempty"`
	// Text is a WarnNote's sentence, written where it arose: the
	// recording's reader (a truncated last line) or the latency import
	// (which columns it read).
	Text string `json:"text,omitempty"`
	// Samples and Processes are WarnGrowthLeftOut's: how many samples
	// left growing processes out, and the most left out of one.
	Samples   int `json:"samples,omitempty"`
	Processes int `json:"processes,omitempty"`
	// SuspectPSI is WarnSuspectPSI's contradiction, in the PSI of
	// Cgroup ("" the host's), on the recording's Kernel.
	SuspectPSI *signal.PSISuspect `json:"suspect_psi,omitempty"`
	Cgroup     string             `json:"cgroup,omitempty"`
	Kernel     string             `json:"kernel,omitempty"`
}

// WarningKind names what a Warning is about.
type WarningKind string

// Warning kinds.
const (
	// WarnTooFewSamples: the recording has fewer than two samples, so no
	// interval: nothing was analysed.
	WarnTooFewSamples WarningKind = "too_few_samples"
	// WarnLatencyFileEmpty: watch followed --latency LatencyFile but read
	// no request from it; pressure episodes only.
	WarnLatencyFileEmpty WarningKind = "latency_file_empty"
	// WarnProbeEmpty: watch's --probe of Probe recorded no request;
	// pressure episodes only.
	WarnProbeEmpty WarningKind = "probe_empty"
	// WarnNoLatency: no latency recorded and none given; pressure
	// episodes only.
	WarnNoLatency WarningKind = "no_latency"
	// WarnNoPSI: the recording has no memory PSI of Scope, so episodes
	// are reclaim and disk bursts, not measured stalls, and no culprit
	// can be proven to have caused memory pressure.
	WarnNoPSI WarningKind = "no_psi"
	// WarnNotProjected: the recording's jobs were not projected over it
	// (Options.Project nil); jobs are matched through their processes
	// only.
	WarnNotProjected WarningKind = "not_projected"
	// WarnGrowthLeftOut: in Samples samples more processes were growing
	// than watch records per sample, up to Processes of them were left
	// out of a sample (record.Sample.RSSLeftOut); each was recorded in
	// turn, so their growth is fitted on fewer points.
	WarnGrowthLeftOut WarningKind = "growth_left_out"
	// WarnSuspectPSI: the recording's PSI contradicts itself
	// (signal.PSICheck): its averages against its total, or a memory
	// stall without reclaim, refault, swap or major-fault activity.
	WarnSuspectPSI WarningKind = "suspect_psi"
	// WarnNote: a sentence from outside package correlate (Text).
	WarnNote WarningKind = "note"
)

// Notes wraps sentences written outside correlate as WarnNote warnings.
func Notes(texts ...string) []Warning {
	var ws []Warning
	for _, t := range texts {
		ws = append(ws, Warning{Kind: WarnNote, Text: t})
	}
	return ws
}
