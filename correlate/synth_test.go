package correlate

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memdiag/memdiag/process"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/timers"
)

// The synthetic recordings of these tests are built in code: a calm
// baseline with deterministic noise, and bursts of pressure made by named
// processes at chosen times.

var t0 = time.Date(2026, 3, 15, 12, 0, 0, 0, time.UTC)

func at(hhmmss string) time.Time {
	tt, err := time.Parse("15:04:05", hhmmss)
	if err != nil {
		panic(err)
	}
	return time.Date(t0.Year(), t0.Month(), t0.Day(), tt.Hour(), tt.Minute(), tt.Second(), 0, time.UTC)
}

// burst is a stretch of memory pressure and disk I/O caused by one process.
type burst struct {
	at       time.Time
	dur      time.Duration
	comm     string
	unit     string
	pid      int
	writeBps float64 // the process's write rate during the burst
	latency  time.Duration
	noSignal bool // a latency spike alone, with calm kernel signals
	diskOnly bool // disk writes alone, no memory pressure (unrelated work on a shared host)
	noProc   bool // no per-process I/O recorded (not root)
}

type synth struct {
	interval time.Duration
	dur      time.Duration
	bursts   []burst
	jobs     []record.Job
	// steady is a process doing I/O all the time (the service itself).
	steady     string
	steadyUnit string
	steadyBps  float64
	noLatency  bool
	// cgroupCalm records a --cgroup group whose PSI stays at 0.5 % while
	// the host's rises.
	cgroupCalm bool
	// starts are processes that start (exec event) at a time and do little.
	starts []burst
}

func u64(v float64) *uint64 { x := uint64(v); return &x }

func (s synth) build(t *testing.T) *record.Recording {
	t.Helper()
	if s.interval == 0 {
		s.interval = 30 * time.Second
	}
	if s.dur == 0 {
		s.dur = 2 * time.Hour
	}
	rng := rand.New(rand.NewPCG(1, 2))
	rec := &record.Recording{Header: record.Header{
		Type: record.TypeHeader, Format: record.FormatName, SchemaVersion: record.SchemaVersion,
		Host: "web1", Start: t0, Interval: s.interval, PageSize: 4096, TimeZone: "UTC", Jobs: s.jobs,
	}}
	var someUS, fullUS, diskRd, diskWr, ioTicks, wtime, refault, scan, pswpout float64
	const lruFull = 8192.0 * (1 << 20)
	fileLRU := lruFull
	steadyBytes := 0.0
	n := int(s.dur / s.interval)
	procTotals := map[int]float64{}
	for i := 0; i <= n; i++ {
		now := t0.Add(time.Duration(i) * s.interval)
		dt := s.interval.Seconds()
		smp := record.Sample{Type: record.TypeSample, Seq: i, Time: now}
		// Interval (now-interval, now]: find the bursts active in it.
		var active []burst
		for _, b := range s.bursts {
			if i > 0 && b.at.Before(now) && b.at.Add(b.dur).After(now.Add(-s.interval)) {
				active = append(active, b)
			}
		}
		noise := func(x float64) float64 { return x * (0.9 + 0.2*rng.Float64()) }
		some, full := noise(0.005), noise(0.001)
		rdBps, wrBps := noise(2<<20), noise(1<<20)
		busy, qt := noise(0.05), noise(0.05)
		lruDelta, ref, sc, so := noise(64<<10)*dt*(rng.Float64()-0.5), noise(10), 0.0, 0.0
		lat := time.Duration(noise(80e6))
		var procs []record.ProcIO
		for _, b := range active {
			if b.noSignal {
				lat = b.latency
				continue
			}
			wrBps += b.writeBps
			if b.diskOnly {
				d := b.writeBps * dt
				procTotals[b.pid] += d
				procs = append(procs, record.ProcIO{PID: b.pid, StartTicks: uint64(b.pid), Comm: b.comm, Unit: b.unit,
					WriteBytes: uint64(procTotals[b.pid]), DeltaWriteBytes: uint64(d)})
				continue
			}
			some, full = noise(0.20), noise(0.05)
			busy, qt = noise(0.9), noise(1.5)
			lruDelta = -noise(20<<20) * dt
			ref, sc, so = noise(1000), noise(500), noise(2<<20)
			if b.latency > 0 {
				lat = b.latency
			}
			if b.noProc {
				continue
			}
			d := b.writeBps * dt
			procTotals[b.pid] += d
			procs = append(procs, record.ProcIO{PID: b.pid, StartTicks: uint64(b.pid), Comm: b.comm, Unit: b.unit,
				WriteBytes: uint64(procTotals[b.pid]), DeltaWriteBytes: uint64(d)})
		}
		if s.steady != "" && i > 0 {
			d := s.steadyBps * dt
			steadyBytes += d
			procs = append(procs, record.ProcIO{PID: 100, StartTicks: 100, Comm: s.steady, Unit: s.steadyUnit,
				WriteBytes: uint64(steadyBytes), DeltaWriteBytes: uint64(d)})
		}
		for _, list := range [][]burst{s.bursts, s.starts} {
			for _, b := range list {
				if b.noSignal || b.comm == "" {
					continue
				}
				if i > 0 && b.at.Before(now) && !b.at.Before(now.Add(-s.interval)) {
					smp.Events = append(smp.Events, record.Event{Kind: process.Exec, Time: now, Source: "poll",
						PID: b.pid, StartTicks: uint64(b.pid), Comm: b.comm, Unit: b.unit})
				}
			}
		}
		if i > 0 {
			someUS += some * dt * 1e6
			fullUS += full * dt * 1e6
			diskRd += rdBps * dt
			diskWr += wrBps * dt
			ioTicks += busy * dt * 1e9
			wtime += qt * dt * 1e9
			refault += ref * dt
			scan += sc * dt
			pswpout += so * dt / 4096
			if len(active) == 0 && fileLRU < lruFull {
				// The page cache refills in the interval after a burst.
				lruDelta = lruFull - fileLRU
			}
			fileLRU += lruDelta
			if !s.noLatency {
				smp.Latency = &record.Latency{Count: int(50 * dt), Mean: lat / 3, P50: lat / 4, P95: lat / 2, P99: lat, Max: lat * 11 / 10}
			}
		}
		smp.PSI = &record.PSI{Memory: &record.PSIResource{
			Some: record.PSILine{Total: time.Duration(someUS) * time.Microsecond},
			Full: &record.PSILine{Total: time.Duration(fullUS) * time.Microsecond},
		}}
		if s.cgroupCalm {
			cg := time.Duration(float64(now.Sub(t0)) * 0.005)
			smp.CgroupPSI = &record.PSI{Memory: &record.PSIResource{Some: record.PSILine{Total: cg}, Full: &record.PSILine{Total: cg / 5}}}
		}
		half := fileLRU / 2
		smp.Meminfo = &record.Meminfo{ActiveFile: u64(half), InactiveFile: u64(half), ActiveAnon: u64(300 << 20), InactiveAnon: u64(100 << 20)}
		smp.VMStat = &record.VMStat{WorkingsetRefaultFile: u64(refault), PgscanDirect: u64(scan), Pswpout: u64(pswpout)}
		smp.Disks = []record.Disk{{Name: "sda", ReadBytes: uint64(diskRd), WriteBytes: uint64(diskWr),
			IOTicks: time.Duration(ioTicks), TimeInQueue: time.Duration(wtime)}}
		smp.Procs = procs
		rec.Samples = append(rec.Samples, smp)
	}
	return rec
}

// timerJob is a systemd timer with a calendar schedule "*:MM/PP" (minute
// MM of every hour, then every PP minutes), understood by testProject.
func timerJob(name, sched, command string) record.Job {
	base := strings.TrimSuffix(name, ".timer")
	p := schedPeriod(sched).Seconds()
	return record.Job{Name: name, Source: timers.Systemd, File: "lib/systemd/system/" + name,
		Schedule: []string{sched}, AccuracySec: time.Minute, PeriodSeconds: &p,
		Unit: base + ".service", Command: command, Active: true}
}

func schedPeriod(sched string) time.Duration {
	_, per, _ := strings.Cut(sched, "/")
	m, _ := strconv.Atoi(per)
	if strings.HasPrefix(sched, "*:*:") {
		return time.Duration(m) * time.Second
	}
	return time.Duration(m) * time.Minute
}

// testProject is a stand-in for timers.Project for the "*:MM/PP" schedules
// of these tests: firings at minute MM, MM+PP, ... of every hour, each
// allowed to start up to AccuracySec late.
func testProject(jobs []timers.Job, from, to time.Time, loc *time.Location) []timers.Firing {
	var out []timers.Firing
	for _, j := range jobs {
		var mm, pp int
		if _, err := fmt.Sscanf(j.Schedule[0], "*:*:%d/%d", &mm, &pp); err == nil {
			// Seconds: "*:*:SS/PP".
			for m := from.Truncate(time.Minute); m.Before(to); m = m.Add(time.Minute) {
				for sec := mm; sec < 60; sec += pp {
					p := m.Add(time.Duration(sec) * time.Second)
					if !p.Before(from) && p.Before(to) {
						out = append(out, timers.Firing{Job: j.Name, Planned: p, Earliest: p, Latest: p.Add(j.AccuracySec)})
					}
				}
			}
			continue
		}
		if _, err := fmt.Sscanf(j.Schedule[0], "*:%d/%d", &mm, &pp); err != nil {
			panic(err)
		}
		h := from.In(loc).Truncate(time.Hour).Add(-time.Hour)
		for ; !h.After(to); h = h.Add(time.Hour) {
			for m := mm; m < 60; m += pp {
				p := h.Add(time.Duration(m) * time.Minute)
				if p.Before(from) || p.After(to) {
					continue
				}
				out = append(out, timers.Firing{Job: j.Name, Planned: p, Earliest: p, Latest: p.Add(j.AccuracySec)})
			}
		}
	}
	return out
}
