package correlate

import (
	"math"
	"testing"
	"time"
)

// The trial s8 tenant recording (cgroup scope, the default): 7 latency
// spikes and no episode, 5 of them beside another group's disk bursts
// that span 35% of the recording: 2.4 by chance, P(≥5 of 7) ≈ 0.04, a
// lead (report says "look there").
func TestWeighBurstsRealTenant(t *testing.T) {
	res := trialS8(t, "trial-s8-tenant.jsonl.gz", Options{})
	bl := res.BurstLead
	if len(res.Episodes) != 0 || bl == nil {
		t.Fatalf("%d episodes, burst lead %+v; want 0 and one", len(res.Episodes), bl)
	}
	if bl.Spikes != 7 || bl.WithBurst != 5 || !bl.Lead {
		t.Errorf("burst lead %+v; want 5 of 7 spikes with a burst, a lead", *bl)
	}
	if math.Round(100*bl.Cover) != 35 || math.Abs(bl.Expected-7*bl.Cover) > 1e-12 {
		t.Errorf("cover %.3f, expected %.3f; want 35%% and 7 × cover", bl.Cover, bl.Expected)
	}
	if want := BinomialTail(7, 5, bl.Cover); bl.PChance != want || bl.PChance >= BurstLeadChance {
		t.Errorf("P by chance %.4g, want BinomialTail(7, 5, cover) = %.4g, below %g", bl.PChance, want, BurstLeadChance)
	}
}

// Bursts that cover the whole recording make every spike "with a burst"
// by chance: no lead. No spike beside a burst: no BurstLead at all.
func TestWeighBurstsChance(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	r := &Result{Start: t0, End: at(100), Interval: time.Second,
		LoneSpikes: []Spike{{Start: at(10), End: at(11)}, {Start: at(50), End: at(51)}, {Start: at(90), End: at(91)}}}
	if bl := WeighBursts(r); bl != nil {
		t.Errorf("no bursts: %+v, want nil", *bl)
	}
	r.IOBursts = []IOBurst{{Start: at(0), End: at(100)}}
	bl := WeighBursts(r)
	if bl == nil || bl.WithBurst != 3 || bl.Cover != 1 || bl.Expected != 3 || bl.PChance != 1 || bl.Lead {
		t.Errorf("bursts all along: %+v; want 3 of 3 with a burst, cover 1, P 1, no lead", bl)
	}
	// One burst of 8 s (10 s with an interval each side) beside one spike:
	// cover 0.1, P(≥1 of 3) = 1 − 0.9³ = 0.271, no lead.
	r.IOBursts = []IOBurst{{Start: at(46), End: at(54)}}
	bl = WeighBursts(r)
	if bl == nil || bl.WithBurst != 1 || math.Abs(bl.Cover-0.1) > 1e-9 || math.Abs(bl.PChance-0.271) > 1e-9 || bl.Lead {
		t.Errorf("one burst: %+v; want 1 of 3, cover 0.1, P 0.271, no lead", bl)
	}
}
