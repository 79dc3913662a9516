package record

import (
	stdjson "encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	json "github.com/goccy/go-json"
)

// decoded is what the JSON decoder makes of a PSI line (the path before
// parsePSILine), and whether it took it.
func decoded(b []byte) (PSILine, bool) {
	var j psiLineJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return PSILine{}, false
	}
	return PSILine{j.Avg10, j.Avg60, j.Avg300, time.Duration(j.TotalUS) * time.Microsecond}, true
}

func samePSILine(a, b PSILine) bool {
	return math.Float64bits(a.Avg10) == math.Float64bits(b.Avg10) && math.Float64bits(a.Avg60) == math.Float64bits(b.Avg60) &&
		math.Float64bits(a.Avg300) == math.Float64bits(b.Avg300) && a.Total == b.Total
}

// Every line MarshalJSON writes is parsed by hand, to what the decoder
// makes of it.
func TestParsePSILineWritten(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	vals := []float64{0, 0.17, 99.99, 100, 1e-7, 1.5e21, math.Copysign(0, -1), 12345.678, math.MaxFloat64, math.SmallestNonzeroFloat64}
	for range 3000 {
		vals = append(vals, math.Round(r.Float64()*1e4)/100, r.ExpFloat64(), r.NormFloat64()*1e-9)
	}
	for i := 0; i+2 < len(vals); i++ {
		l := PSILine{vals[i], vals[i+1], vals[i+2], time.Duration(r.Int64N(1e15)) * time.Microsecond}
		b, err := stdjson.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := parsePSILine(b)
		want, _ := decoded(b)
		if !ok || !samePSILine(got, want) || !samePSILine(got, l) {
			t.Fatalf("%s: hand %v %+v, decoder %+v, written %+v", b, ok, got, want, l)
		}
	}
	// Not as written: left to the decoder, which still reads them.
	for _, s := range []string{
		`{"avg10": 1,"avg60":2,"avg300":3,"total_us":4}`,
		`{"avg60":2,"avg10":1,"avg300":3,"total_us":4}`,
		`{"avg10":1,"avg60":2,"avg300":3,"total_us":4,"x":1}`,
		`{"avg10":1,"avg60":2,"avg300":3,"total_us":1234567890123456789}`,
		`{"avg10":1,"avg60":2,"avg300":3,"total_us":4e3}`,
		`{"avg10":01,"avg60":2,"avg300":3,"total_us":4}`,
		`{"avg10":1e999,"avg60":2,"avg300":3,"total_us":4}`,
	} {
		if _, ok := parsePSILine([]byte(s)); ok {
			t.Errorf("%s: parsed by hand, want it left to the decoder", s)
		}
	}
	var l PSILine
	if err := l.UnmarshalJSON([]byte(`{"total_us":4000, "avg10":1.5}`)); err != nil || l != (PSILine{Avg10: 1.5, Total: 4 * time.Millisecond}) {
		t.Errorf("another key order: %+v, %v; want avg10 1.5, total 4ms", l, err)
	}
}

// FuzzParsePSILine: what parsePSILine takes, the decoder takes too and
// reads to the same values.
func FuzzParsePSILine(f *testing.F) {
	f.Add([]byte(`{"avg10":0.17,"avg60":0.13,"avg300":0.08,"total_us":3426}`))
	f.Add([]byte(`{"avg10":-0,"avg60":1e-7,"avg300":1.5E+21,"total_us":-12}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := parsePSILine(b)
		if !ok {
			return
		}
		want, dok := decoded(b)
		if !dok || !samePSILine(got, want) {
			t.Fatalf("%q: hand %+v, decoder %v %+v", b, got, dok, want)
		}
	})
}

// BenchmarkPSILineUnmarshal is one PSI line through UnmarshalJSON (by
// hand) and through the decoder (as before), with -benchmem.
func BenchmarkPSILineUnmarshal(b *testing.B) {
	line := []byte(`{"avg10":0.17,"avg60":0.13,"avg300":0.08,"total_us":3426}`)
	b.Run("hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var l PSILine
			if err := l.UnmarshalJSON(line); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decoder", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := decoded(line); !ok {
				b.Fatal("not decoded")
			}
		}
	})
}
