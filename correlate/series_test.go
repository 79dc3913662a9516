package correlate

import (
	"math"
	"testing"
)

// TestPackProc: a packed process reads back as it was, at the fields'
// extremes too.
func TestPackProc(t *testing.T) {
	ps := []procIO{
		{pid: 1, name: 0, start: 0},
		{pid: 4194304, name: 70000, start: 317931, readBytes: 96638833302, writeBytes: 75164678585, dReadBytes: 147456, dWriteByte: 0},
		{pid: math.MaxInt32, name: math.MaxUint32, start: math.MaxUint64, readBytes: math.MaxUint64, writeBytes: 1, dReadBytes: math.MaxUint64, dWriteByte: math.MaxUint64},
	}
	var b []byte
	for _, p := range ps {
		b = packProc(b, p)
	}
	sr := &Series{procOff: []int{0}, procs: b}
	got := sr.procsOf(0, nil)
	if len(got) != len(ps) {
		t.Fatalf("got %d processes, want %d", len(got), len(ps))
	}
	for i := range ps {
		if got[i] != ps[i] {
			t.Errorf("process %d: got %+v, want %+v", i, got[i], ps[i])
		}
	}
}
