package correlate

import "time"

// BurstLeadChance is how unlikely by chance (BinomialTail) the latency
// spikes that came with an I/O burst must be for the bursts to be a lead
// (BurstLead.Lead): a place to look, not a culprit, hence 0.1 rather
// than the culprit model's 0.01.
const BurstLeadChance = 0.1

// BurstLead weighs the latency spikes outside episodes (Result.LoneSpikes)
// that came with an I/O burst (Result.IOBursts) against chance: a spike
// at a random moment comes with a burst with probability Cover, so
// WithBurst of Spikes is a lead only when BinomialTail says that many is
// unlikely (docs/analyze.md, "An episode needs memory pressure").
type BurstLead struct {
	Spikes int // latency spikes outside episodes
	// WithBurst are the spikes an I/O burst overlaps, or adjoins within
	// one sampling interval.
	WithBurst int
	// Cover is the share of the recording (0..1) within one sampling
	// interval of an I/O burst: where a spike counts as coming with one.
	Cover float64
	// Expected is Spikes × Cover, the spikes chance would give (count).
	Expected float64
	// PChance is P(≥ WithBurst of Spikes) by chance: BinomialTail(Spikes,
	// WithBurst, Cover).
	PChance float64
	// Lead says PChance < BurstLeadChance: the verdict points at the
	// bursts.
	Lead bool
}

// WeighBursts is r's BurstLead: nil when no latency spike outside an
// episode came with an I/O burst. Analyze sets Result.BurstLead with it.
func WeighBursts(r *Result) *BurstLead {
	k := spikesWithBursts(r)
	if k == 0 {
		return nil
	}
	n, cover := len(r.LoneSpikes), burstCover(r)
	p := BinomialTail(n, k, cover)
	return &BurstLead{Spikes: n, WithBurst: k, Cover: cover, Expected: float64(n) * cover, PChance: p, Lead: p < BurstLeadChance}
}

// burstCover is the share of the recording within an interval of an I/O
// burst: where a spike counts as coming with one (spikesWithBursts), so
// the chance that a spike at a random moment does.
func burstCover(r *Result) float64 {
	span := r.End.Sub(r.Start)
	if span <= 0 {
		return 0
	}
	var covered time.Duration
	var reach time.Time             // end of the union so far
	for _, io := range r.IOBursts { // in time order
		a, z := io.Start.Add(-r.Interval), io.End.Add(r.Interval)
		if a.Before(r.Start) {
			a = r.Start
		}
		if z.After(r.End) {
			z = r.End
		}
		if a.Before(reach) {
			a = reach
		}
		if z.After(a) {
			covered += z.Sub(a)
			reach = z
		}
	}
	return min(1, float64(covered)/float64(span))
}

// spikesWithBursts counts the latency spikes outside episodes that an I/O
// burst overlaps, or adjoins within one sampling interval.
func spikesWithBursts(r *Result) int {
	n := 0
	for _, sp := range r.LoneSpikes {
		for _, io := range r.IOBursts {
			if sp.Start.Before(io.End.Add(r.Interval)) && io.Start.Before(sp.End.Add(r.Interval)) {
				n++
				break
			}
		}
	}
	return n
}
