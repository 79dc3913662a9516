package gate

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseEveryMetric(t *testing.T) {
	// One valid expression per metric, with the limit in the dimension's
	// base unit worked out by hand.
	tests := []struct {
		expr  string
		kind  Kind
		op    Op
		limit float64
	}{
		{"memory.some.avg10<10", KindAvg, OpLT, 10},
		{"memory.some.avg60<=1", KindAvg, OpLE, 1},
		{"memory.some.avg300<2.5%", KindAvg, OpLT, 2.5},
		{"memory.some.stall<5%", KindStall, OpLT, 5},
		{"memory.some.total<2s", KindTotal, OpLT, 2},
		{"memory.full.avg10<10", KindAvg, OpLT, 10},
		{"memory.full.avg60<=1", KindAvg, OpLE, 1},
		{"memory.full.avg300<1", KindAvg, OpLT, 1},
		{"memory.full.stall<1%", KindStall, OpLT, 1},
		{"memory.full.total<500ms", KindTotal, OpLT, 0.5},
		{"io.some.avg10<20", KindAvg, OpLT, 20},
		{"io.some.avg60<20", KindAvg, OpLT, 20},
		{"io.some.avg300<20", KindAvg, OpLT, 20},
		{"io.some.stall<=10%", KindStall, OpLE, 10},
		{"io.some.total<1m", KindTotal, OpLT, 60},
		{"io.full.avg10<5", KindAvg, OpLT, 5},
		{"io.full.avg60<5", KindAvg, OpLT, 5},
		{"io.full.avg300<5", KindAvg, OpLT, 5},
		{"io.full.stall<2%", KindStall, OpLT, 2},
		{"io.full.total<1500us", KindTotal, OpLT, 0.0015},
		{"cpu.some.avg10<50", KindAvg, OpLT, 50},
		{"cpu.some.avg60<50", KindAvg, OpLT, 50},
		{"cpu.some.avg300<50", KindAvg, OpLT, 50},
		{"cpu.some.stall<30%", KindStall, OpLT, 30},
		{"cpu.some.total<10s", KindTotal, OpLT, 10},
		{"cpu.full.avg10<1", KindAvg, OpLT, 1},
		{"cpu.full.avg60<1", KindAvg, OpLT, 1},
		{"cpu.full.avg300<1", KindAvg, OpLT, 1},
		{"cpu.full.stall<1%", KindStall, OpLT, 1},
		{"cpu.full.total<250µs", KindTotal, OpLT, 0.00025},
		{"swap.out<64MiB", KindBytes, OpLT, 64 << 20},
		{"swap.in<1GiB", KindBytes, OpLT, 1 << 30},
		{"oom_kills==0", KindCount, OpEQ, 0},
		{"refault.file.rate<500/s", KindRate, OpLT, 500},
		{"refault.anon.rate<2MiB/s", KindRate, OpLT, 2 << 20},
		{"reclaim.direct.rate<1000/s", KindRate, OpLT, 1000},
		{"reclaim.limit.rate<1MiB/s", KindRate, OpLT, 1 << 20},
		{"reclaim.alloc.rate<1000/s", KindRate, OpLT, 1000},
		{"reclaim.kswapd.rate<5000/s", KindRate, OpLT, 5000},
		{"reclaim.steal.rate<5000/s", KindRate, OpLT, 5000},
		{"refault.activate.rate<100/s", KindRate, OpLT, 100},
		{"refault.restore.rate<100/s", KindRate, OpLT, 100},
		{"majfault.rate<50/s", KindEventRate, OpLT, 50},
		{"allocstall.rate<=0/s", KindEventRate, OpLE, 0},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			th, err := Parse(tt.expr)
			if err != nil {
				t.Fatal(err)
			}
			if th.Metric.Kind != tt.kind || th.Op != tt.op || th.Limit() != tt.limit || th.Expr != tt.expr {
				t.Errorf("Parse(%q) = kind %d op %s limit %g expr %q; want kind %d op %s limit %g",
					tt.expr, th.Metric.Kind, th.Op, th.Limit(), th.Expr, tt.kind, tt.op, tt.limit)
			}
			seen[th.Metric.Name] = true
		})
	}
	for _, m := range metrics {
		if !seen[m.Name] {
			t.Errorf("metric %s has no parse test", m.Name)
		}
	}
}

func TestParseUnitsAndOperators(t *testing.T) {
	tests := []struct {
		expr  string
		op    Op
		unit  string
		limit float64 // base unit: percent, second, byte, count, pages/s, bytes/s
	}{
		{"memory.full.stall<1%", OpLT, "%", 1},
		{"memory.full.stall<=1%", OpLE, "%", 1},
		{"memory.full.stall>1%", OpGT, "%", 1},
		{"memory.full.stall>=1%", OpGE, "%", 1},
		{"memory.full.stall==0%", OpEQ, "%", 0},
		{"memory.full.stall!=0%", OpNE, "%", 0},
		{"  memory.full.stall  <  0.5 %  ", OpLT, "%", 0.5}, // spaces anywhere
		{"memory.full.total<1500us", OpLT, "us", 0.0015},
		{"memory.full.total<1500µs", OpLT, "µs", 0.0015},
		{"memory.full.total<20ms", OpLT, "ms", 0.02},
		{"memory.full.total<2s", OpLT, "s", 2},
		{"memory.full.total<1.5m", OpLT, "m", 90},
		{"swap.out<4096B", OpLT, "B", 4096},
		{"swap.out<512KiB", OpLT, "KiB", 512 << 10},
		{"swap.out<64MiB", OpLT, "MiB", 64 << 20},
		{"swap.out<2GiB", OpLT, "GiB", 2 << 30},
		{"refault.file.rate<100/s", OpLT, "/s", 100},
		{"refault.file.rate<4096B/s", OpLT, "B/s", 4096},
		{"refault.file.rate<8KiB/s", OpLT, "KiB/s", 8 << 10},
		{"refault.file.rate<1MiB/s", OpLT, "MiB/s", 1 << 20},
		{"refault.file.rate<1GiB/s", OpLT, "GiB/s", 1 << 30},
		{"refault.file.rate<2MB/s", OpLT, "MB/s", 2e6},
		{"swap.out<64MB", OpLT, "MB", 64e6},
		{"swap.out<1kB", OpLT, "kB", 1000},
		{"memory.full.total<2h", OpLT, "h", 7200},
		{"memory.some.total<1d", OpLT, "d", 86400},
		{"io.some.total<1w", OpLT, "w", 7 * 86400},
		{"memory.some.avg10<10", OpLT, "", 10}, // the kernel's unit, percent
		{"oom_kills<=2", OpLE, "", 2},
		{"swap.out==0", OpEQ, "", 0}, // a bare zero needs no unit
		{"memory.full.total<=0", OpLE, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			th, err := Parse(tt.expr)
			if err != nil {
				t.Fatal(err)
			}
			if th.Op != tt.op || th.Unit.Name != tt.unit || th.Limit() != tt.limit {
				t.Errorf("Parse(%q) = op %s unit %q limit %g; want %s %q %g", tt.expr, th.Op, th.Unit.Name, th.Limit(), tt.op, tt.unit, tt.limit)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	const metricsList = "{memory,io,cpu}.{some,full}.{avg10,avg60,avg300,stall,total}, " +
		"reclaim.direct.rate, reclaim.limit.rate, reclaim.alloc.rate, reclaim.kswapd.rate, reclaim.steal.rate, " +
		"refault.file.rate, refault.anon.rate, refault.activate.rate, refault.restore.rate, majfault.rate, allocstall.rate, " +
		"swap.in, swap.out, oom_kills"
	tests := []struct{ expr, want string }{
		{"", `invalid threshold: empty expression; write e.g. memory.full.stall<1%`},
		{"memory.full.stall 1%", `invalid threshold "memory.full.stall 1%": no comparison operator; use one of < <= > >= == != (e.g. memory.full.stall<1%)`},
		{"memory.full.stall=1%", `invalid threshold "memory.full.stall=1%": bad operator "=1"; use one of < <= > >= == !=`},
		{"memory.full.stall!1%", `invalid threshold "memory.full.stall!1%": bad operator "!1"; use one of < <= > >= == !=`},
		{"<1%", `invalid threshold "<1%": no metric before <; valid metrics: ` + metricsList},
		{"memory.full.stal<1%", `invalid threshold "memory.full.stal<1%": unknown metric "memory.full.stal"; valid metrics: ` + metricsList},
		{"memory.stall<1%", `invalid threshold "memory.stall<1%": unknown metric "memory.stall"; valid metrics: ` + metricsList},
		{"swap.out<", `invalid threshold "swap.out<": no value after <`},
		{"memory.full.stall<<1%", `invalid threshold "memory.full.stall<<1%": "<1%" is not a number (values are non-negative numbers with a unit, e.g. 5%, 2s, 64MiB)`},
		{"memory.full.stall<-1%", `invalid threshold "memory.full.stall<-1%": "-1%" is not a number (values are non-negative numbers with a unit, e.g. 5%, 2s, 64MiB)`},
		{"memory.full.stall<1.2.3%", `invalid threshold "memory.full.stall<1.2.3%": "1.2.3" is not a number`},
		{"memory.full.stall<1", `invalid threshold "memory.full.stall<1": memory.full.stall needs a unit: one of % (e.g. memory.full.stall<1%)`},
		{"memory.full.stall<1s", `invalid threshold "memory.full.stall<1s": unit "s" is not valid for memory.full.stall; use one of %`},
		{"memory.full.stall<101%", `invalid threshold "memory.full.stall<101%": memory.full.stall is a share of wall time and cannot exceed 100%`},
		{"memory.some.avg10<10ms", `invalid threshold "memory.some.avg10<10ms": unit "ms" is not valid for memory.some.avg10; use one of %`},
		{"memory.full.total<2", `invalid threshold "memory.full.total<2": memory.full.total needs a unit: one of us µs ms s m h d w (e.g. memory.full.total<2s)`},
		{"memory.full.total<2y", `invalid threshold "memory.full.total<2y": unit "y" is not valid for memory.full.total; use one of us µs ms s m h d w`},
		{"swap.out<64Mb", `invalid threshold "swap.out<64Mb": unit "Mb" is not valid for swap.out; use one of B KiB MiB GiB kB MB GB`},
		{"swap.out<64", `invalid threshold "swap.out<64": swap.out needs a unit: one of B KiB MiB GiB kB MB GB (e.g. swap.out<64MiB)`},
		{"oom_kills<1%", `invalid threshold "oom_kills<1%": oom_kills is a count and takes no unit, got "%"`},
		{"oom_kills<0.5", `invalid threshold "oom_kills<0.5": oom_kills is a count; "0.5" is not a whole number`},
		{"refault.file.rate<100", `invalid threshold "refault.file.rate<100": refault.file.rate needs a unit: one of /s B/s KiB/s MiB/s GiB/s kB/s MB/s GB/s (e.g. refault.file.rate<100/s)`},
		{"reclaim.direct.rate<100/m", `invalid threshold "reclaim.direct.rate<100/m": unit "/m" is not valid for reclaim.direct.rate; use one of /s B/s KiB/s MiB/s GiB/s kB/s MB/s GB/s`},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			_, err := Parse(tt.expr)
			if err == nil {
				t.Fatalf("Parse(%q) succeeded; want error %q", tt.expr, tt.want)
			}
			if !errors.Is(err, ErrThreshold) {
				t.Errorf("error does not wrap ErrThreshold: %v", err)
			}
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Errorf("Parse(%q) error (-want +got):\n%s", tt.expr, diff)
			}
		})
	}
}

func TestParseAllReportsEveryBadExpression(t *testing.T) {
	ths, err := ParseAll([]string{"memory.full.stall<1%", "bogus<1", "swap.out<1XB"})
	if len(ths) != 1 || ths[0].Expr != "memory.full.stall<1%" {
		t.Errorf("ParseAll kept %v; want the one good threshold", ths)
	}
	if err == nil || !strings.Contains(err.Error(), `"bogus<1"`) || !strings.Contains(err.Error(), `"swap.out<1XB"`) {
		t.Errorf("ParseAll error = %v; want both bad expressions named", err)
	}
}

func TestOpHolds(t *testing.T) {
	tests := []struct {
		op       Op
		obs, lim float64
		holds    bool
	}{
		{OpLT, 0.99, 1, true}, {OpLT, 1, 1, false},
		{OpLE, 1, 1, true}, {OpLE, 1.01, 1, false},
		{OpGT, 1.01, 1, true}, {OpGT, 1, 1, false},
		{OpGE, 1, 1, true}, {OpGE, 0.99, 1, false},
		{OpEQ, 0, 0, true}, {OpEQ, 1, 0, false},
		{OpNE, 1, 0, true}, {OpNE, 0, 0, false},
	}
	for _, tt := range tests {
		if got := tt.op.Holds(tt.obs, tt.lim); got != tt.holds {
			t.Errorf("%g %s %g = %v; want %v", tt.obs, tt.op, tt.lim, got, tt.holds)
		}
	}
}
