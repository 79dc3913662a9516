package record

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	gojson "github.com/goccy/go-json"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/memdiag/memdiag/diskio"
	"github.com/memdiag/memdiag/memstate"
	"github.com/memdiag/memdiag/process"
	"github.com/memdiag/memdiag/psi"
	"github.com/memdiag/memdiag/swap"
	"github.com/memdiag/memdiag/timers"
)

// filler sets every field of a value, however deep, to a value no other
// field has: a field a conversion drops or a tag the recording does not
// read comes back zero, and a field that lands in the wrong place comes
// back with another field's value.
type filler struct{ n int }

func (f *filler) fill(v reflect.Value) {
	f.n++
	switch {
	case v.Type() == reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(time.Date(2026, 12, 1, 19, 17, f.n, f.n*1000, time.UTC)))
		return
	case v.Type() == reflect.TypeFor[time.Duration]():
		// Whole µs: PSI totals are written in µs.
		v.SetInt(int64(f.n) * int64(time.Microsecond))
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			f.fill(v.Field(i))
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		f.fill(v.Elem())
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			f.fill(v.Index(i))
		}
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		f.fill(k)
		f.fill(e)
		v.SetMapIndex(k, e)
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d", f.n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(int64(f.n))
	case reflect.Uint, reflect.Uint64, reflect.Uint32:
		v.SetUint(uint64(f.n))
	case reflect.Float64:
		v.SetFloat(float64(f.n) + 0.5)
	default:
		panic("filler: no value for " + v.Type().String())
	}
}

// roundTrip fills a collector value, converts it to its wire type, writes
// that as a recording does (encoding/json), reads it back as the reader
// does (goccy/go-json) and converts it back: every field must survive.
func roundTrip[C, W any](t *testing.T, to func(C) W, back func(W) C, opts ...cmp.Option) {
	t.Helper()
	var in C
	(&filler{}).fill(reflect.ValueOf(&in).Elem())
	b, err := json.Marshal(to(in))
	if err != nil {
		t.Fatal(err)
	}
	var w W
	if err := gojson.Unmarshal(b, &w); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(in, back(w), opts...); d != "" {
		t.Errorf("%T → %T → JSON → back (-in +out):\n%s\nJSON: %s", in, w, d, b)
	}
}

// TestWireConversions checks every conversion between a collector's
// struct and its wire type with every field set: a field added to a
// collector's struct that the conversion does not carry (possible only
// where the conversion is written field by field: PSI's, ProcRetention's)
// fails here. A
// flat struct's conversion is a Go conversion, which does not compile
// once the two structs differ.
func TestWireConversions(t *testing.T) {
	roundTrip(t, FromPSI, (*PSI).Snapshot)
	roundTrip(t, FromMeminfo, (*Meminfo).LRU)
	roundTrip(t, FromVMStat, (*VMStat).LRU)
	roundTrip(t, FromDisks, diskioDisks)
	roundTrip(t, FromProcs, func(ps []ProcIO) []diskio.ProcIO {
		return convert(ps, func(p ProcIO) diskio.ProcIO { return diskio.ProcIO(p) })
	})
	roundTrip(t, FromEvents, ProcessEvents)
	roundTrip(t, FromScan, func(s *ScanStats) *diskio.ScanStats { return (*diskio.ScanStats)(s) })
	roundTrip(t, FromEventStats, func(s *EventStats) *process.EventStats { return (*process.EventStats)(s) })
	roundTrip(t, FromLatency, (*Latency).Summary)
	roundTrip(t, FromRSS, MemstateRSS)
	roundTrip(t, FromSwaps, func(ds []SwapDevice) []swap.Device {
		return convert(ds, func(d SwapDevice) swap.Device { return swap.Device(d) })
	})
	// A timer's live ActiveState is not recorded (json:"-"): what it
	// decides is, in runs_now and live_note; nor is whether a crontab
	// line steps aside for systemd: its reason says it.
	roundTrip(t, FromJobs, TimersJobs, cmpopts.IgnoreFields(timers.Job{}, "LiveActive", "StepsAside"))
	// Why evidence could not be read is recorded in its reading, not a
	// field of its own (TestRetentionUnreadRoundTrip).
	roundTrip(t, FromRetention, func(p ProcRetention) memstate.ProcRetention {
		return memstate.ProcRetention{PID: p.PID, StartTicks: p.StartTicks, Comm: p.Comm, Retention: *p.Retention.Memstate()}
	}, cmpopts.IgnoreFields(memstate.Retention{}, "Unread"))
}

// TestRetentionUnreadRoundTrip: evidence that could not be read is
// recorded as the reading "no allocator evidence: why" (the v1 format,
// as recordings made before memstate.Retention.Unread hold it) and read
// back as Unread; a reading that says something else leaves Unread
// empty.
func TestRetentionUnreadRoundTrip(t *testing.T) {
	in := memstate.ProcRetention{PID: 9, Comm: "p", Retention: memstate.Retention{Threads: 2, Unread: "open /proc/9/maps: permission denied"}}
	b, err := json.Marshal(FromRetention(in))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"reading":"no allocator evidence: open /proc/9/maps: permission denied"`) {
		t.Errorf("recorded as %s", b)
	}
	var w ProcRetention
	if err := gojson.Unmarshal(b, &w); err != nil {
		t.Fatal(err)
	}
	if got := w.Retention.Memstate(); got.Unread != in.Unread || got.Threads != 2 {
		t.Errorf("read back %+v, want Unread %q", got, in.Unread)
	}
	w.Reading = "glibc malloc, 2 threads"
	if got := w.Retention.Memstate(); got.Unread != "" {
		t.Errorf("a reading of evidence read back as unread: %q", got.Unread)
	}
}

// TestWireConversionsDetectLoss checks that the round trip sees a field
// the conversion drops, so TestWireConversions can fail.
func TestWireConversionsDetectLoss(t *testing.T) {
	var in psi.Snapshot
	(&filler{}).fill(reflect.ValueOf(&in).Elem())
	w := FromPSI(&in)
	w.IO.Full = nil // as a conversion that forgot Full would leave it
	if cmp.Equal(&in, w.Snapshot()) {
		t.Fatal("a dropped field compares equal")
	}
}

// TestWireEventKinds pins the strings the event kinds are written as.
func TestWireEventKinds(t *testing.T) {
	for k, want := range map[process.EventKind]string{process.Exec: "exec", process.Exit: "exit"} {
		b, err := json.Marshal(Event{Kind: k})
		if err != nil {
			t.Fatal(err)
		}
		var got struct{ Kind string }
		if err := json.Unmarshal(b, &got); err != nil || got.Kind != want {
			t.Errorf("kind %v written as %s, want %q", k, b, want)
		}
	}
}
