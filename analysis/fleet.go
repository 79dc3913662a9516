package analysis

import (
	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/fleet"
	"github.com/memdiag/memdiag/latency"
)

// Fleet analyzes each host of d (analyze --prometheus) as Recording does
// a recording: the host's series, one sample per step, read into a
// correlate.Series, the latency of o.Import joined, correlate run; what
// the host's sources lack and the notes on them are added to its result.
// Unlike Recording it checks no sample count and no gaps: the samples
// are Prometheus's steps, and fleet says what they lack. Hosts come in
// d.HostNames order, each result beside its host.
func Fleet(d *fleet.Data, o Options) ([]fleet.HostResult, []*fleet.Host, error) {
	var results []fleet.HostResult
	var hosts []*fleet.Host
	for _, name := range d.HostNames() {
		h := d.Recording(name)
		res, err := fleetHost(h, o)
		if err != nil {
			return nil, nil, err
		}
		results = append(results, fleet.HostResult{Host: name, Res: res})
		hosts = append(hosts, h)
	}
	return results, hosts, nil
}

// fleetHost analyzes one host's recording built from Prometheus series.
func fleetHost(h *fleet.Host, o Options) (correlate.Result, error) {
	hdr := h.Rec.Header
	var imp *latency.Imported
	if o.Import != nil {
		var err error
		if imp, err = o.Import(&hdr); err != nil {
			return correlate.Result{}, err
		}
	}
	sr := correlate.NewSeries(hdr)
	for i := range h.Rec.Samples {
		sr.Add(&h.Rec.Samples[i])
	}
	res, _, err := Series(sr, nil, imp, o)
	if err != nil {
		return correlate.Result{}, err
	}
	res.Lacks = append(res.Lacks, h.Lacks...)
	res.Warnings = append(res.Warnings, correlate.Notes(h.Notes...)...)
	return res, nil
}
