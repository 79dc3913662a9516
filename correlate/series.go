package correlate

import (
	"encoding/binary"
	"sort"
	"strconv"
	"time"

	"github.com/memdiag/memdiag/diskio"
	"github.com/memdiag/memdiag/latency"
	"github.com/memdiag/memdiag/memview"
	"github.com/memdiag/memdiag/record"
)

// Series is what [Analyze] uses of a recording, gathered one sample at a
// time so that a long recording is never held whole: `memdiag analyze`
// of a day (86,400 samples of ~6 KB) keeps per interval the signal values
// of [record.Interval] it reads (~150 bytes), the latency summary, the
// top processes by I/O (~20 bytes each, packed, names interned) and the RSS
// points memview.Growth fits (24 bytes a process), plus the rare process
// events, stall onsets and OOM kills.
//
//	s := correlate.NewSeries(h)
//	rec, err := record.ReadEach(path, s.Add) // after reading the header
//	res := s.Analyze(opts)
//
// Analyze(rec, opts) is NewSeries, Add for each sample, then Analyze.
type Series struct {
	Header record.Header

	ivs     []ival
	lat     []*latency.Summary // per interval: the Latency of the sample that ends it
	procOff []int              // per sample: where its processes start in procs
	procs   []byte             // procIO fields as uvarints (packProc), ~20 bytes a process
	names   []procName
	nameIdx map[procName]uint32
	events  []sampleEvents // samples with process events, in sample order
	onsets  []record.StallOnset
	ooms    []OOMKill
	growth  memview.GrowthSeries
	prev    *record.Sample
	samples int
}

// ival is the part of a record.Interval that Analyze reads; the fields
// keep their names, units and NaN for unknown.
type ival struct {
	Start, End time.Time
	Dt         time.Duration

	MemSome, MemFull, CgMemSome, CgMemFull float64
	FileLRUDeltaBytes                      float64
	RefaultFilePerSec, RefaultAnonPerSec   float64
	DirectReclaimPerSec                    float64
	DiskReadBytesPerSec                    float64
	DiskWriteBytesPerSec                   float64
	DiskIOTimePerSec                       float64
	SwapOutBytesPerSec                     float64
}

func lean(iv *record.Interval) ival {
	return ival{
		Start: iv.Start, End: iv.End, Dt: iv.Dt,
		MemSome: iv.MemSome, MemFull: iv.MemFull, CgMemSome: iv.CgMemSome, CgMemFull: iv.CgMemFull,
		FileLRUDeltaBytes: iv.FileLRUDeltaBytes,
		RefaultFilePerSec: iv.RefaultFilePerSec, RefaultAnonPerSec: iv.RefaultAnonPerSec,
		DirectReclaimPerSec: iv.AllocReclaimPerSec, // signal.AllocReclaim: direct + cgroup-limit reclaim
		DiskReadBytesPerSec: iv.DiskReadBytesPerSec, DiskWriteBytesPerSec: iv.DiskWriteBytesPerSec,
		DiskIOTimePerSec: iv.DiskIOTimePerSec, SwapOutBytesPerSec: iv.SwapOutBytesPerSec,
	}
}

// procIO is what the episodes and the culprit ranking read of a
// diskio.ProcIO; name indexes Series.names.
type procIO struct {
	pid                    int
	name                   uint32
	start                  uint64
	readBytes, writeBytes  uint64 // cumulative
	dReadBytes, dWriteByte uint64 // since the previous sample
}

// procName is a process's names, interned: they repeat every sample.
type procName struct{ comm, cmdline, unit string }

type sampleEvents struct {
	sample int
	events []diskio.ProcEvent
}

// NewSeries starts an empty series for a recording with header h.
func NewSeries(h record.Header) *Series {
	return &Series{Header: h, nameIdx: map[procName]uint32{}}
}

// Add folds in the next sample, which must be later than the previous
// one. s is not kept; the previous sample is, until the next Add.
func (sr *Series) Add(s *record.Sample) {
	i := sr.samples
	sr.samples++
	if sr.prev != nil {
		iv := record.Between(&sr.Header, sr.prev, s)
		sr.ivs = append(sr.ivs, lean(&iv))
		var l *latency.Summary
		if s.Latency != nil && s.Latency.Count > 0 {
			c := *s.Latency
			l = &c
		}
		sr.lat = append(sr.lat, l)
		if p, c := sr.prev.VMStat, s.VMStat; p != nil && c != nil && p.OOMKill != nil && c.OOMKill != nil && *c.OOMKill > *p.OOMKill {
			k := OOMKill{Time: s.Time, Count: int(*c.OOMKill - *p.OOMKill)}
			for _, e := range s.Events {
				if e.Kind == "exit" {
					k.Exited = append(k.Exited, e.Comm+" "+strconv.Itoa(e.PID))
				}
			}
			sr.ooms = append(sr.ooms, k)
		}
	}
	sr.procOff = append(sr.procOff, len(sr.procs))
	for j := range s.Procs {
		p := &s.Procs[j]
		sr.procs = packProc(sr.procs, procIO{
			pid: p.PID, name: sr.intern(p.Comm, p.Cmdline, p.Unit), start: p.StartTicks,
			readBytes: p.ReadBytes, writeBytes: p.WriteBytes, dReadBytes: p.DeltaReadBytes, dWriteByte: p.DeltaWriteBytes,
		})
	}
	if len(s.Events) > 0 {
		evs := make([]diskio.ProcEvent, len(s.Events))
		copy(evs, s.Events)
		sr.events = append(sr.events, sampleEvents{i, evs})
	}
	sr.onsets = append(sr.onsets, s.Onsets...)
	if len(s.RSS) > 0 {
		sr.growth.Add(s.Time, s.RSS)
	}
	// Between needs the previous sample's counters; nothing else of it
	// is kept.
	sr.prev = s
}

func (sr *Series) intern(comm, cmdline, unit string) uint32 {
	k := procName{comm, cmdline, unit}
	if i, ok := sr.nameIdx[k]; ok {
		return i
	}
	i := uint32(len(sr.names))
	sr.names = append(sr.names, k)
	sr.nameIdx[k] = i
	return i
}

// Samples is the number of samples added.
func (sr *Series) Samples() int { return sr.samples }

// procsOf appends the processes of sample i to buf.
func (sr *Series) procsOf(i int, buf []procIO) []procIO {
	end := len(sr.procs)
	if i+1 < len(sr.procOff) {
		end = sr.procOff[i+1]
	}
	b := sr.procs[sr.procOff[i]:end]
	for len(b) > 0 {
		var p procIO
		p, b = unpackProc(b)
		buf = append(buf, p)
	}
	return buf
}

// packProc appends p to b as seven uvarints: a day's 864,000 entries take
// ~20 MB instead of 41 MB as structs.
func packProc(b []byte, p procIO) []byte {
	for _, v := range [...]uint64{uint64(p.pid), uint64(p.name), p.start, p.readBytes, p.writeBytes, p.dReadBytes, p.dWriteByte} {
		b = binary.AppendUvarint(b, v)
	}
	return b
}

// unpackProc reads what packProc wrote at the start of b and returns the
// rest of b.
func unpackProc(b []byte) (procIO, []byte) {
	var v [7]uint64
	for i := range v {
		x, n := binary.Uvarint(b)
		v[i], b = x, b[n:]
	}
	return procIO{pid: int(v[0]), name: uint32(v[1]), start: v[2], readBytes: v[3], writeBytes: v[4], dReadBytes: v[5], dWriteByte: v[6]}, b
}

// eventsOf returns the process events of sample i.
func (sr *Series) eventsOf(i int) []diskio.ProcEvent {
	j := sort.Search(len(sr.events), func(j int) bool { return sr.events[j].sample >= i })
	if j < len(sr.events) && sr.events[j].sample == i {
		return sr.events[j].events
	}
	return nil
}

// sampleTime is the time of sample i (i ≥ 1, or 0 with one interval).
func (sr *Series) sampleTime(i int) time.Time {
	if i == 0 {
		return sr.ivs[0].Start
	}
	return sr.ivs[i-1].End
}
