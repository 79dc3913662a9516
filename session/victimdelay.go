package session

import (
	"context"
	"errors"
	"fmt"

	"github.com/memdiag/memdiag/procevents"
	"github.com/memdiag/memdiag/record"
)

// VictimDelayName is the header's collector name of the victim's delay
// accounting.
const VictimDelayName = "victim-delay"

// addVictimDelay wires the victim process's delay accounting (taskstats
// by TGID; Sample.VictimDelay): how long its threads waited in reclaim,
// on thrashing, swap-in and compaction. Only for a victim process, and
// only while kernel.task_delayacct is 1; otherwise the header says why,
// once.
func addVictimDelay(_ context.Context, _ *Options, h *record.Header, ws *Sources) {
	v := h.Victim
	switch {
	case v == nil:
		return // the victim's own status says why
	case v.PID == 0:
		h.Collectors = append(h.Collectors, record.CollectorStatus{Name: VictimDelayName,
			Reason: "the victim was given as a unit or cgroup: delay accounting is read per process; give --victim PID to record its threads' waits in reclaim"})
		return
	case h.DelayAcct == nil || !*h.DelayAcct:
		st := record.CollectorStatus{Name: VictimDelayName,
			Reason: "kernel.task_delayacct is 0: the victim's waits in reclaim, on thrashing and swap-in are not measured; --enable-delayacct turns it on for the recording (root)"}
		h.Collectors = append(h.Collectors, st)
		return
	}
	q, err := procevents.NewTGIDQuerier()
	if err != nil {
		ws.status(h, VictimDelayName, err)
		return
	}
	src := &victimDelay{q: q, pid: v.PID}
	if _, err := q.TGID(v.PID); err != nil {
		q.Close()
		ws.status(h, VictimDelayName, err)
		return
	}
	h.Collectors = append(h.Collectors, record.CollectorStatus{Name: VictimDelayName, Available: true})
	ws.closers = append(ws.closers, func() { _ = q.Close() })
	ws.List = append(ws.List, src)
}

// victimDelay is the record.Source of Sample.VictimDelay.
type victimDelay struct {
	q    *procevents.TGIDQuerier
	pid  int
	gone bool
}

func (s *victimDelay) Name() string { return VictimDelayName }

func (s *victimDelay) Fill(_ context.Context, smp *record.Sample) error {
	if s.gone {
		return nil
	}
	d, err := s.q.TGID(s.pid)
	if errors.Is(err, procevents.ErrNoProcess) {
		// Said once: the samples after it carry no victim_delay.
		s.gone = true
		return fmt.Errorf("the victim (pid %d) exited: its delays are not recorded from here on", s.pid)
	}
	if err != nil {
		return err
	}
	smp.VictimDelay = &record.TaskDelays{PID: s.pid,
		ReclaimNS: uint64(d.Reclaim), ThrashingNS: uint64(d.Thrashing), SwapinNS: uint64(d.Swapin),
		CompactNS: uint64(d.Compact), BlkioNS: uint64(d.Blkio)}
	return nil
}
