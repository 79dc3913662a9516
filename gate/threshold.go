// Package gate judges a run against thresholds on the kernel's
// memory-pressure signals, for CI: "fail the build when the service's
// cgroup stalled on memory more than 1 % of the run".
//
// A threshold is written the way a k6 user writes one, metric, operator and
// value with its unit:
//
//	memory.some.avg10<10        peak of the kernel's 10 s EWMA over the run, percent
//	memory.full.stall<1%        share of wall time stalled over the whole run
//	memory.full.total<2s        stall time over the whole run
//	swap.out<64MiB              bytes swapped out during the run
//	oom_kills==0                OOM kills during the run
//	refault.file.rate<500/s     file refaults per second over the run (pages, or MiB/s)
//	reclaim.direct.rate<1000/s  pages scanned by direct reclaim per second
//
// [Parse] reads one expression, [Read] a YAML or JSON file of them,
// [Evaluate] judges them over the samples of a run ([record.Sample]), and
// [Render] and [WriteJUnit] write the verdict.
//
// Sources: PSI as in package psi (https://docs.kernel.org/accounting/psi.html);
// counters from /proc/vmstat, or with a cgroup from cgroup v2
// <group>/memory.stat and memory.events
// (https://docs.kernel.org/admin-guide/cgroup-v2.html).
package gate

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/memdiag/memdiag/signal"
	"github.com/memdiag/memdiag/units"
)

// ErrThreshold is wrapped by every error about a threshold expression.
var ErrThreshold = errors.New("invalid threshold")

// Kind says how a metric's value over a run is derived from the samples.
type Kind int

// Metric kinds.
const (
	KindAvg       Kind = iota // peak over the samples of a PSI avg10/60/300 (percent)
	KindStall                 // ΣΔtotal / Σwall of a PSI line (percent of wall time)
	KindTotal                 // ΣΔtotal of a PSI line (seconds)
	KindBytes                 // ΣΔ of a page counter, in bytes
	KindCount                 // ΣΔ of an event counter
	KindRate                  // ΣΔ / Σwall of a page counter (pages/s)
	KindEventRate             // ΣΔ / Σwall of an event counter (/s)
)

// Metric is one thing a threshold can be set on.
type Metric struct {
	Name string
	Kind Kind
	Doc  string

	// PSI metrics.
	Resource string // "memory", "io", "cpu"
	Full     bool   // the "full" line, else "some"
	Avg      int    // 10, 60 or 300 for KindAvg

	// Signal is the catalogue entry the metric judges (nil for a PSI
	// average, which is the kernel's EWMA read as it is): the one
	// definition analyze and mem use too.
	Signal *signal.Signal
	// CounterName names the counters in messages ("pswpout").
	CounterName string
}

// Dim is the dimension of a unit.
type Dim int

// Dimensions.
const (
	DimPercent  Dim = iota // percent of wall time
	DimDuration            // base unit: second
	DimBytes               // base unit: byte
	DimCount               // no unit
	DimPageRate            // "/s": pages (or events) per second
	DimByteRate            // base unit: byte per second
)

// Unit is a unit a threshold value may carry.
type Unit struct {
	Name  string  // as written: "%", "ms", "MiB", "/s", "MiB/s", "" for none
	Dim   Dim     // its dimension
	Scale float64 // value in the dimension's base unit of 1 Name
}

var unitTable = []Unit{
	{"%", DimPercent, 1},
	{"us", DimDuration, 1e-6}, {"µs", DimDuration, 1e-6}, {"ms", DimDuration, 1e-3}, {"s", DimDuration, 1}, {"m", DimDuration, 60},
	{"h", DimDuration, 3600}, {"d", DimDuration, units.Day.Seconds()}, {"w", DimDuration, units.Week.Seconds()},
	{"B", DimBytes, 1}, {"KiB", DimBytes, units.KiB}, {"MiB", DimBytes, units.MiB}, {"GiB", DimBytes, units.GiB},
	{"kB", DimBytes, units.KB}, {"MB", DimBytes, units.MB}, {"GB", DimBytes, units.GB},
	{"/s", DimPageRate, 1},
	{"B/s", DimByteRate, 1}, {"KiB/s", DimByteRate, units.KiB}, {"MiB/s", DimByteRate, units.MiB}, {"GiB/s", DimByteRate, units.GiB},
	{"kB/s", DimByteRate, units.KB}, {"MB/s", DimByteRate, units.MB}, {"GB/s", DimByteRate, units.GB},
}

// Units lists the units a threshold value may carry, in the order the
// parser tries them.
func Units() []Unit { return append([]Unit(nil), unitTable...) }

// allowed lists the dimensions each kind accepts, and whether a bare number
// (no unit) is allowed besides 0.
func (k Kind) allowed() (dims []Dim, bare bool) {
	switch k {
	case KindAvg:
		return []Dim{DimPercent}, true // the kernel reports percent
	case KindStall:
		return []Dim{DimPercent}, false
	case KindTotal:
		return []Dim{DimDuration}, false
	case KindBytes:
		return []Dim{DimBytes}, false
	case KindCount:
		return nil, true
	case KindRate:
		return []Dim{DimPageRate, DimByteRate}, false
	case KindEventRate:
		return []Dim{DimPageRate}, false
	}
	return nil, false
}

// ValidUnits lists the units a metric accepts, in the order of the table.
func (m *Metric) ValidUnits() []string {
	dims, _ := m.Kind.allowed()
	var out []string
	for _, u := range unitTable {
		for _, d := range dims {
			if u.Dim == d {
				out = append(out, u.Name)
			}
		}
	}
	return out
}

var metrics = buildMetrics()

func buildMetrics() []*Metric {
	var ms []*Metric
	// A PSI line gives five metrics: the kernel's three averages, the
	// catalogue entry's stall share (its Gate name) and its total.
	for _, sig := range signal.Catalogue {
		if sig.PSI == nil {
			continue
		}
		res, full := sig.PSI.Resource, sig.PSI.Full
		p := strings.TrimSuffix(sig.Gate, "stall")
		for _, avg := range []int{10, 60, 300} {
			ms = append(ms, &Metric{Name: p + "avg" + strconv.Itoa(avg), Kind: KindAvg, Resource: res, Full: full, Avg: avg,
				Doc: fmt.Sprintf("peak of the kernel's %d s average over the run, percent", avg)})
		}
		ms = append(ms,
			&Metric{Name: sig.Gate, Kind: KindStall, Resource: res, Full: full, Signal: sig,
				Doc: "share of wall time stalled over the whole run, from the total counter"},
			&Metric{Name: p + "total", Kind: KindTotal, Resource: res, Full: full, Signal: sig,
				Doc: "time stalled over the whole run"})
	}
	for _, sig := range signal.Catalogue {
		if sig.Gate == "" || sig.PSI != nil {
			continue
		}
		m := &Metric{Name: sig.Gate, Signal: sig, CounterName: strings.Join(sig.Counters, ", ")}
		switch {
		case sig.Aggregate == signal.Total && sig.Unit == signal.Pages:
			m.Kind, m.Doc = KindBytes, "bytes "+strings.TrimPrefix(sig.Doc, "pages ")+" during the run"
		case sig.Aggregate == signal.Total:
			m.Kind, m.Doc = KindCount, sig.Doc+" during the run"
		case sig.Unit == signal.Pages:
			m.Kind, m.Doc = KindRate, sig.Doc+", per second over the run"
		default:
			m.Kind, m.Doc = KindEventRate, sig.Doc+", per second over the run"
		}
		ms = append(ms, m)
	}
	return ms
}

// LookupMetric returns the metric by name, or nil.
func LookupMetric(name string) *Metric {
	for _, m := range metrics {
		if m.Name == name {
			return m
		}
	}
	return nil
}

// validMetricsText is the list of metrics in error messages, compressed
// the way a shell brace expansion reads.
var validMetricsText = func() string {
	names := []string{"{memory,io,cpu}.{some,full}.{avg10,avg60,avg300,stall,total}"}
	for _, sig := range signal.Catalogue {
		if sig.Gate != "" && sig.PSI == nil {
			names = append(names, sig.Gate)
		}
	}
	return strings.Join(names, ", ")
}()

// Op is a comparison operator.
type Op string

// Operators.
const (
	OpLT Op = "<"
	OpLE Op = "<="
	OpGT Op = ">"
	OpGE Op = ">="
	OpEQ Op = "=="
	OpNE Op = "!="
)

// Holds reports whether observed op limit.
func (o Op) Holds(observed, limit float64) bool {
	switch o {
	case OpLT:
		return observed < limit
	case OpLE:
		return observed <= limit
	case OpGT:
		return observed > limit
	case OpGE:
		return observed >= limit
	case OpEQ:
		return observed == limit
	case OpNE:
		return observed != limit
	}
	return false
}

// LowerIsWorse reports whether the worst moment for this operator is the
// lowest value (a floor such as ">"), not the highest.
func (o Op) LowerIsWorse() bool { return o == OpGT || o == OpGE }

// Threshold is one parsed expression such as "memory.full.stall<1%".
type Threshold struct {
	Expr   string  // as written, trimmed
	Metric *Metric // what it is set on
	Op     Op
	Number float64 // the number as written
	Unit   Unit    // the unit as written; Name "" for a bare number
}

// Limit is the threshold value in the base unit of its dimension
// (percent, second, byte, count, pages/s or bytes/s).
func (t *Threshold) Limit() float64 { return t.Number * t.Unit.Scale }

func (t *Threshold) String() string { return t.Expr }

// Parse reads one threshold expression. Errors wrap [ErrThreshold] and say
// what is valid.
func Parse(expr string) (*Threshold, error) {
	e := strings.TrimSpace(expr)
	fail := func(format string, a ...any) error {
		return fmt.Errorf("%w %q: %s", ErrThreshold, e, fmt.Sprintf(format, a...))
	}
	if e == "" {
		return nil, fmt.Errorf("%w: empty expression; write e.g. memory.full.stall<1%%", ErrThreshold)
	}
	i := strings.IndexAny(e, "<>=!")
	if i < 0 {
		return nil, fail("no comparison operator; use one of < <= > >= == != (e.g. memory.full.stall<1%%)")
	}
	name := strings.TrimSpace(e[:i])
	var op Op
	for _, o := range []Op{OpLE, OpGE, OpEQ, OpNE, OpLT, OpGT} {
		if strings.HasPrefix(e[i:], string(o)) {
			op = o
			break
		}
	}
	if op == "" {
		return nil, fail("bad operator %q; use one of < <= > >= == !=", e[i:min(i+2, len(e))])
	}
	rhs := strings.TrimSpace(e[i+len(op):])
	if name == "" {
		return nil, fail("no metric before %s; valid metrics: %s", op, validMetricsText)
	}
	m := LookupMetric(name)
	if m == nil {
		return nil, fail("unknown metric %q; valid metrics: %s", name, validMetricsText)
	}
	if rhs == "" {
		return nil, fail("no value after %s", op)
	}
	j := strings.IndexFunc(rhs, func(r rune) bool { return !(unicode.IsDigit(r) || r == '.') })
	if j < 0 {
		j = len(rhs)
	}
	numText, unitText := rhs[:j], strings.TrimSpace(rhs[j:])
	if numText == "" {
		return nil, fail("%q is not a number (values are non-negative numbers with a unit, e.g. 5%%, 2s, 64MiB)", rhs)
	}
	n, err := strconv.ParseFloat(numText, 64)
	if err != nil {
		return nil, fail("%q is not a number", numText)
	}
	t := &Threshold{Expr: e, Metric: m, Op: op, Number: n}
	dims, bare := m.Kind.allowed()
	valid := m.ValidUnits()
	if unitText == "" {
		switch {
		case m.Kind == KindCount || bare:
			t.Unit = Unit{Dim: DimCount, Scale: 1}
			if m.Kind == KindAvg {
				t.Unit = Unit{Dim: DimPercent, Scale: 1}
			}
		case n == 0:
			t.Unit = Unit{Dim: dims[0], Scale: 1} // zero needs no unit
		default:
			example := map[Dim]string{DimPercent: "%", DimDuration: "s", DimBytes: "MiB", DimPageRate: "/s"}[dims[0]]
			return nil, fail("%s needs a unit: one of %s (e.g. %s<%s%s)", name, strings.Join(valid, " "), name, numText, example)
		}
	} else {
		found := false
		for _, u := range unitTable {
			if u.Name != unitText {
				continue
			}
			for _, d := range dims {
				if u.Dim == d {
					t.Unit, found = u, true
				}
			}
		}
		if !found {
			if len(valid) == 0 {
				return nil, fail("%s is a count and takes no unit, got %q", name, unitText)
			}
			return nil, fail("unit %q is not valid for %s; use one of %s", unitText, name, strings.Join(valid, " "))
		}
	}
	if t.Unit.Dim == DimPercent && n > 100 {
		return nil, fail("%s is a share of wall time and cannot exceed 100%%", name)
	}
	if m.Kind == KindCount && n != float64(int64(n)) {
		return nil, fail("%s is a count; %q is not a whole number", name, numText)
	}
	return t, nil
}

// ParseAll parses each expression; the error lists every bad one.
func ParseAll(exprs []string) ([]*Threshold, error) {
	var out []*Threshold
	var errs []error
	for _, e := range exprs {
		t, err := Parse(e)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, t)
	}
	return out, errors.Join(errs...)
}
