// Command genrec writes a synthetic `memdiag watch` recording and a
// load-test results file for benchmarking `memdiag analyze`:
// by default 24 hours at 1 s (86,400 samples) with 10 processes per
// sample (Procs and RSS, as watch writes them) and a generic CSV of
// 1,000,000 requests (timestamp,latency_ms,status).
//
// The host it describes: 24 GiB, two disks, ten long-running services,
// and a cron job "backup" at minute 5 of every hour that reads 6 GiB in
// 4 minutes. While it runs, memory PSI rises, the file LRU shrinks,
// refaults and kswapd scanning climb, the disk is busy and request
// latency goes from ~10 ms to ~300 ms — so analyze has 24 episodes, a
// period and a culprit to find, like in a real recording. The values are
// generated with a fixed seed: the same flags give the same files.
//
//	go run ./bench/genrec -out /tmp/day.jsonl -latency /tmp/day.csv
//	/usr/bin/time -v memdiag analyze /tmp/day.jsonl --latency /tmp/day.csv
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"time"

	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/timers"
)

func main() {
	out := flag.String("out", "genrec.jsonl", "recording to write (.gz compresses)")
	latOut := flag.String("latency", "genrec.csv", "results file to write (\"\": none)")
	dur := flag.Duration("duration", 24*time.Hour, "recorded time")
	interval := flag.Duration("interval", time.Second, "sampling interval")
	procs := flag.Int("procs", 10, "processes per sample")
	requests := flag.Int("requests", 1_000_000, "requests in the results file")
	flag.Parse()
	start := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	if err := writeRecording(*out, start, *dur, *interval, *procs); err != nil {
		fmt.Fprintln(os.Stderr, "genrec:", err)
		os.Exit(1)
	}
	if *latOut != "" {
		if err := writeLatency(*latOut, start, *dur, *requests); err != nil {
			fmt.Fprintln(os.Stderr, "genrec:", err)
			os.Exit(1)
		}
	}
}

// inBackup reports whether t is within the hourly backup (minute 5 to
// 9) and how far into it, 0..1.
func inBackup(t time.Time) (bool, float64) {
	m := t.Minute()*60 + t.Second()
	if m < 5*60 || m >= 9*60 {
		return false, 0
	}
	return true, float64(m-5*60) / 240
}

func u(v uint64) *uint64 { return &v }

type svc struct {
	pid          int
	comm, cmd    string
	unit         string
	read, write  uint64
	rdRate, wrRt uint64 // bytes per second, mean
	anon, file   uint64
}

func writeRecording(path string, start time.Time, dur, interval time.Duration, nprocs int) error {
	w, err := record.Create(path, true)
	if err != nil {
		return err
	}
	period := 3600.0
	h := &record.Header{
		MemdiagVersion: "genrec", Host: "genrec", Kernel: "6.1.0-27-amd64",
		BootTime: start.Add(-72 * time.Hour), Start: start, Interval: interval,
		TimeZone: "UTC", PageSize: 4096, ClockTicks: 100, Root: "/", TopN: nprocs,
		Collectors: []record.CollectorStatus{{Name: "psi", Available: true}, {Name: "meminfo", Available: true},
			{Name: "vmstat", Available: true}, {Name: "diskstats", Available: true}, {Name: "procs", Available: true}},
		Jobs: []record.Job{{Name: "cron.d/backup:2", Source: timers.Cron, File: "etc/cron.d/backup", Line: 2,
			Schedule: []string{"5 * * * *"}, PeriodSeconds: &period, Command: "/usr/local/bin/backup --all",
			User: "root", Active: true, ActiveVia: []string{"cron"}}},
	}
	if err := w.WriteHeader(h); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(7, 7))
	names := []string{"postgres", "nginx", "java", "redis-server", "node", "python3", "rsyslogd", "containerd", "prometheus", "sshd"}
	svcs := make([]*svc, 0, nprocs)
	for i := 0; i < nprocs; i++ {
		n := names[i%len(names)]
		svcs = append(svcs, &svc{pid: 1000 + 37*i, comm: n, cmd: "/usr/sbin/" + n + " --config /etc/" + n + "/" + n + ".conf",
			unit: n + ".service", rdRate: uint64(20000 + 5000*i), wrRt: uint64(60000 + 9000*i),
			anon: uint64(200+40*i) << 20, file: uint64(30+7*i) << 20})
	}
	backup := &svc{pid: 0, comm: "backup", cmd: "/usr/local/bin/backup --all", unit: "cron.service"}

	var psiMemSome, psiMemFull, psiIOSome, psiIOFull, psiCPU time.Duration
	var pgscanK, pgstealK, refault, activate, majflt, pgscanD uint64 = 1e6, 9e5, 4e5, 1e5, 5e4, 0
	var dReads, dWrites, dRB, dWB uint64 = 3e6, 2e6, 90 << 30, 70 << 30
	var dTicks, dWeighted time.Duration
	activeFile, inactiveFile := uint64(6<<30), uint64(5<<30)
	var s record.Sample
	n := int(dur / interval)
	sec := interval.Seconds()
	for i := 0; i < n; i++ {
		t := start.Add(time.Duration(i) * interval)
		on, frac := inBackup(t)
		jit := func(x float64) float64 { return x * (0.8 + 0.4*rng.Float64()) }
		stall := jit(0.002)
		if on {
			stall = jit(0.12)
		}
		psiMemSome += time.Duration(stall * sec * float64(time.Second))
		psiMemFull += time.Duration(stall / 2 * sec * float64(time.Second))
		psiIOSome += time.Duration(jit(3*stall) * sec * float64(time.Second))
		psiIOFull += time.Duration(jit(stall) * sec * float64(time.Second))
		psiCPU += time.Duration(jit(0.05) * sec * float64(time.Second))
		// The kernel prints averages with two decimals.
		r2 := func(x float64) float64 { return math.Round(x*100) / 100 }
		line := func(tot time.Duration, share float64) record.PSILine {
			return record.PSILine{Avg10: r2(share * 100), Avg60: r2(share * 80), Avg300: r2(share * 50), Total: tot}
		}
		snap := &record.PSI{
			Memory: &record.PSIResource{Some: line(psiMemSome, stall), Full: &record.PSILine{Avg10: r2(stall * 50), Avg60: r2(stall * 40), Avg300: r2(stall * 25), Total: psiMemFull}},
			IO:     &record.PSIResource{Some: line(psiIOSome, 3*stall), Full: &record.PSILine{Total: psiIOFull}},
			CPU:    &record.PSIResource{Some: line(psiCPU, 0.05), Full: &record.PSILine{}},
		}
		// Reclaim: the backup's reads push out the services' file pages.
		scan, ref := uint64(jit(200)), uint64(jit(20))
		if on {
			scan, ref = uint64(jit(60000)), uint64(jit(4000))
			if activeFile > 2<<30 {
				activeFile -= uint64(jit(12 << 20))
			}
		} else if activeFile < 6<<30 {
			activeFile += 2 << 20
		}
		pgscanK += scan
		pgstealK += scan * 9 / 10
		refault += ref
		activate += ref / 3
		majflt += ref / 10
		if on && frac > 0.5 {
			pgscanD += uint64(jit(500))
		}
		// Disks: vda busy during the backup.
		rb, wb := uint64(jit(2<<20)), uint64(jit(3<<20))
		busy := jit(0.04)
		if on {
			rb, busy = uint64(jit(26<<20)), min(1, jit(0.85))
		}
		dRB += rb
		dWB += wb
		dReads += rb / 65536
		dWrites += wb / 16384
		dTicks += time.Duration(busy * sec * float64(time.Second))
		dWeighted += time.Duration(busy * 4 * sec * float64(time.Second))

		s = record.Sample{Seq: i, Time: t, PSI: snap,
			Meminfo: &record.Meminfo{MemTotal: u(24 << 30), MemFree: u(2<<30 + uint64(rng.IntN(64<<20))), MemAvailable: u(13 << 30),
				Buffers: u(300 << 20), Cached: u(activeFile + inactiveFile), SwapCached: u(0),
				ActiveAnon: u(4 << 30), InactiveAnon: u(1 << 30), ActiveFile: u(activeFile), InactiveFile: u(inactiveFile),
				Unevictable: u(16 << 20), Dirty: u(uint64(rng.IntN(32 << 20))), Writeback: u(0), Shmem: u(64 << 20),
				SwapTotal: u(0), SwapFree: u(0)},
			VMStat: &record.VMStat{PgscanKswapd: u(pgscanK), PgscanDirect: u(pgscanD), PgstealKswapd: u(pgstealK), PgstealDirect: u(pgscanD / 2),
				WorkingsetRefaultFile: u(refault), WorkingsetRefaultAnon: u(0), WorkingsetActivate: u(activate),
				Pgmajfault: u(majflt), Allocstall: u(pgscanD / 100), OOMKill: u(0), Pswpin: u(0), Pswpout: u(0),
				PgscanAnon: u(0), PgscanFile: u(pgscanK + pgscanD), PgstealAnon: u(0), PgstealFile: u(pgstealK + pgscanD/2)},
			Disks: []record.Disk{
				{Name: "vda", Reads: dReads, Writes: dWrites, ReadBytes: dRB, WriteBytes: dWB, IOTicks: dTicks, TimeInQueue: dWeighted},
				{Name: "vdb", Reads: 52000, Writes: 1100, ReadBytes: 3 << 30, WriteBytes: 40 << 20, IOTicks: 90 * time.Second, TimeInQueue: 120 * time.Second},
			},
			Scan: &record.ScanStats{Processes: 180},
		}
		// Processes: the top nprocs by I/O in the interval.
		top := svcs
		if on {
			if backup.pid == 0 || frac == 0 {
				backup.pid, backup.read, backup.write = 30000+i%5000, 0, 0
			}
			top = append([]*svc{backup}, svcs[:nprocs-1]...)
		}
		s.Procs = make([]record.ProcIO, 0, len(top))
		s.RSS = make([]record.ProcRSS, 0, len(top))
		for _, p := range top {
			dr, dw := uint64(jit(float64(p.rdRate)*sec)), uint64(jit(float64(p.wrRt)*sec))
			if p == backup {
				dr, dw = rb*9/10, uint64(jit(64<<10))
			}
			p.read += dr
			p.write += dw
			s.Procs = append(s.Procs, record.ProcIO{PID: p.pid, PPID: 1, StartTicks: uint64(100 + p.pid), Comm: p.comm,
				Cmdline: p.cmd, Cgroup: "/system.slice/" + p.unit, Unit: p.unit,
				ReadBytes: p.read, WriteBytes: p.write, DeltaReadBytes: dr, DeltaWriteBytes: dw})
			s.RSS = append(s.RSS, record.ProcRSS{PID: p.pid, StartTicks: uint64(100 + p.pid), Comm: p.comm,
				AnonBytes: p.anon + uint64(rng.IntN(1<<20)), FileBytes: p.file, ShmemBytes: 0})
		}
		if err := w.WriteSample(&s); err != nil {
			return err
		}
	}
	return w.Close("duration")
}

// writeLatency writes n requests spread evenly over dur as a generic CSV
// (latency package, "generic" format): ~10 ms normally, ~300 ms with a
// long tail during the backup.
func writeLatency(path string, start time.Time, dur time.Duration, n int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	bw.WriteString("timestamp,latency_ms,status\n")
	rng := rand.New(rand.NewPCG(11, 11))
	step := dur / time.Duration(n)
	var b []byte
	for i := 0; i < n; i++ {
		t := start.Add(time.Duration(i)*step + time.Duration(rng.Int64N(int64(step))))
		ms := 6 + 8*rng.Float64()
		if rng.IntN(1000) == 0 {
			ms *= 4
		}
		if on, _ := inBackup(t); on {
			ms = 150 + 300*rng.Float64()
		}
		status := 200
		if rng.IntN(5000) == 0 {
			status = 503
		}
		b = t.AppendFormat(b[:0], time.RFC3339Nano)
		b = append(b, ',')
		b = strconv.AppendFloat(b, ms, 'f', 3, 64)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(status), 10)
		b = append(b, '\n')
		bw.Write(b)
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
