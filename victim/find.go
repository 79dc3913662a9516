package victim

import (
	"context"
	"errors"
	"strings"

	"github.com/memdiag/memdiag/record"
)

// StatusName is the CollectorStatus name of the victim lookup.
const StatusName = "victim"

// Find is the lookup watch, record and gate do at start. With --victim
// (flag), the victim it names; an error then is the user's (it wraps
// ErrBadFlag). Without it, the service behind probe when probe is a
// local URL; not finding it is no error, only a status that says why and
// to pass --victim. status is the recording header's "victim" entry: its
// Reason also notes a victim whose stall cannot be read apart from the
// host's (its v2 group is the root) or at all (no cgroup2 mount).
func (f *Finder) Find(ctx context.Context, flag, probe string) (*record.Victim, record.CollectorStatus, error) {
	st := record.CollectorStatus{Name: StatusName}
	var v *record.Victim
	var err error
	switch {
	case flag != "":
		if v, err = f.FromFlag(flag); err != nil {
			return nil, st, err
		}
	case probe == "":
		st.Reason = "no --probe to find the service from: pass --victim PID|UNIT|CGROUP to read its own stall and memory"
		return nil, st, nil
	default:
		if v, err = f.FromURL(ctx, probe, record.VictimFromProbe); err != nil {
			st.Reason = "not found from --probe: " + err.Error()
			if !strings.Contains(st.Reason, "--victim") {
				st.Reason += "; pass --victim PID|UNIT|CGROUP"
			}
			if !errors.Is(err, ErrNotFound) {
				st.Reason = "reading the host: " + err.Error() + "; pass --victim PID|UNIT|CGROUP"
			}
			return nil, st, nil
		}
	}
	st.Available = true
	switch {
	case IsHostRoot(v):
		st.Reason = "its cgroup v2 group is the root (/): its PSI is the host's, so its own stall cannot be told apart from the host's; run it in its own group (a systemd unit) to tell"
	case v.CgroupDir == "":
		st.Reason = "its cgroup v2 group was not found (no cgroup2 mount?): its own stall is not recorded, the host's PSI is used"
	}
	return v, st, nil
}
