package record

import (
	"math"
	"testing"
	"time"

	"github.com/memdiag/memdiag/process"
	"github.com/memdiag/memdiag/signal"
)

// v1Case is what a frozen schema-1 recording holds, read off the file
// with jq by hand (testdata/v1/SOURCE says how it was taken).
type v1Case struct {
	path       string
	times      []string // sample times, RFC 3339
	events     []int    // events per sample
	ddExecs    []int    // exec events of dd per sample (the job ran dd 3 times)
	refault    []uint64 // vmstat workingset_refault_file_pages per sample
	cgIOSomeUs []int64  // cgroup_psi.io.some.total_us per sample
	writeBytes []uint64 // disks[0] (vda) write_bytes per sample
}

var v1Cases = []v1Case{{
	path: "testdata/v1/watch-6.18-cgroup.jsonl",
	times: []string{"2026-12-01T19:17:33.179592304Z", "2026-12-01T19:17:34.215267405Z", "2026-12-01T19:17:35.212994067Z",
		"2026-12-01T19:17:36.213485084Z", "2026-12-01T19:17:36.563458329Z"},
	events:     []int{2, 29, 35, 24, 7},
	ddExecs:    []int{0, 1, 1, 1, 0},
	refault:    []uint64{37035800, 37035819, 37035822, 37035832, 37035832},
	cgIOSomeUs: []int64{0, 17666, 35498, 53055, 57904},
	writeBytes: []uint64{51328606208, 51345395712, 51362177024, 51379015680, 51379015680},
}, {
	path: "testdata/v1/watch-6.18-cgroup.jsonl.gz",
	times: []string{"2026-12-01T19:17:38.038313207Z", "2026-12-01T19:17:39.056423456Z", "2026-12-01T19:17:40.055859403Z",
		"2026-12-01T19:17:41.059424618Z", "2026-12-01T19:17:41.519308366Z"},
	events:     []int{1, 22, 62, 27, 13},
	ddExecs:    []int{0, 1, 1, 1, 0},
	refault:    []uint64{37035859, 37035885, 37035886, 37035900, 37035900},
	cgIOSomeUs: []int64{57904, 80863, 102418, 118985, 122404},
	writeBytes: []uint64{51393761280, 51410550784, 51427332096, 51444117504, 51444117504},
}}

// TestV1Recordings reads the frozen schema-1 recordings, plain and gzip,
// field by field, and analyses them: a recording written by the first
// release must read the same in every later one.
func TestV1Recordings(t *testing.T) {
	for _, c := range v1Cases {
		t.Run(c.path, func(t *testing.T) {
			rec, err := ReadFile(c.path)
			if err != nil {
				t.Fatal(err)
			}
			h := rec.Header
			if h.Type != TypeHeader || h.Format != FormatName || h.SchemaVersion != 1 || h.Kernel != "6.18.44-fc-v1045" ||
				h.PageSize != 4096 || h.Interval != time.Second || h.TopN != 10 ||
				h.Cgroup != "/sys/fs/cgroup/unified/memdiag-structure-v1" || len(h.Command) != 1 {
				t.Errorf("header = %+v", h)
			}
			if len(h.Collectors) != 9 || len(h.Jobs) != 9 || len(h.VMStatMapping) == 0 {
				t.Errorf("header: %d collectors, %d jobs, %d vmstat mappings; want 9, 9, some",
					len(h.Collectors), len(h.Jobs), len(h.VMStatMapping))
			}
			if got := h.VMStatMapping["workingset_refault_file_pages"]; len(got) != 1 || got[0] != "workingset_refault_file" {
				t.Errorf("vmstat_mapping[workingset_refault_file_pages] = %v", got)
			}
			if rec.End == nil || rec.End.Samples != 5 || rec.End.Reason != "command exited: command exit code 0" {
				t.Errorf("end = %+v", rec.End)
			}
			if len(rec.Warnings) != 0 {
				t.Errorf("warnings: %v", rec.Warnings)
			}
			if len(rec.Samples) != len(c.times) {
				t.Fatalf("%d samples, want %d", len(rec.Samples), len(c.times))
			}
			for i := range rec.Samples {
				s := &rec.Samples[i]
				if s.Seq != i || s.Time.Format(time.RFC3339Nano) != c.times[i] {
					t.Errorf("sample %d: seq %d time %s, want %s", i, s.Seq, s.Time.Format(time.RFC3339Nano), c.times[i])
				}
				dd := 0
				for _, e := range s.Events {
					if e.Kind == process.Exec && e.Comm == "dd" {
						dd++
					}
				}
				if len(s.Events) != c.events[i] || dd != c.ddExecs[i] {
					t.Errorf("sample %d: %d events, %d dd execs; want %d, %d", i, len(s.Events), dd, c.events[i], c.ddExecs[i])
				}
				if s.VMStat == nil || s.VMStat.WorkingsetRefaultFile == nil || *s.VMStat.WorkingsetRefaultFile != c.refault[i] {
					t.Errorf("sample %d: vmstat refault_file = %v, want %d", i, s.VMStat, c.refault[i])
				}
				if m := s.PSI.Get("memory"); m == nil || m.Some.Total != 114313290*time.Microsecond {
					t.Errorf("sample %d: psi memory some = %+v, want total 114313290 µs", i, m)
				}
				if io := s.CgroupPSI.Get("io"); io == nil || io.Some.Total != time.Duration(c.cgIOSomeUs[i])*time.Microsecond {
					t.Errorf("sample %d: cgroup psi io = %+v, want some total %d µs", i, io, c.cgIOSomeUs[i])
				}
				if len(s.Disks) != 1 || s.Disks[0].Name != "vda" || s.Disks[0].WriteBytes != c.writeBytes[i] {
					t.Errorf("sample %d: disks = %+v", i, s.Disks)
				}
			}
			// Analysed: the rates of the first interval, by hand.
			ivs := Intervals(&rec.Header, rec.Samples)
			if len(ivs) != 4 {
				t.Fatalf("%d intervals", len(ivs))
			}
			dt := rec.Samples[1].Time.Sub(rec.Samples[0].Time).Seconds()
			wantRefault := float64(c.refault[1]-c.refault[0]) / dt
			if got := ivs[0].PerSec(signal.RefaultFile); math.Abs(got-wantRefault) > 1e-9 {
				t.Errorf("refault_file rate = %v, want %v", got, wantRefault)
			}
			if got, want := ivs[0].DiskWriteBytesPerSec, float64(c.writeBytes[1]-c.writeBytes[0])/dt; math.Abs(got-want) > 1e-6 {
				t.Errorf("disk write rate = %v, want %v", got, want)
			}
			if got, want := ivs[0].CgIOSome, float64(c.cgIOSomeUs[1]-c.cgIOSomeUs[0])*1e3/float64(rec.Samples[1].Time.Sub(rec.Samples[0].Time)); math.Abs(got-want) > 1e-12 {
				t.Errorf("cgroup io some share = %v, want %v", got, want)
			}
			if got := ivs[0].MemSome; got != 0 {
				t.Errorf("memory some share = %v, want 0 (total did not move)", got)
			}
		})
	}
}
