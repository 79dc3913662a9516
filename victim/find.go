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
// ErrBadFlag). Without it, the service listening behind the first of
// targets whose URL is local (--probe, then a followed load-test file's
// target, then the wrapped command's); not finding it is no error, only
// a status that says why and to pass --victim. status is the recording
// header's "victim" entry: its Reason also notes a victim whose stall
// cannot be read apart from the host's (its v2 group is the root) or at
// all (no cgroup2 mount).
func (f *Finder) Find(ctx context.Context, flag string, targets []Target) (*record.Victim, record.CollectorStatus, error) {
	st := record.CollectorStatus{Name: StatusName}
	var v *record.Victim
	switch {
	case flag != "":
		var err error
		if v, err = f.FromFlag(flag); err != nil {
			return nil, st, err
		}
	case len(targets) == 0:
		st.Reason = "no service URL to find it from: pass --victim PID|UNIT|CGROUP to read its own stall and memory (watch also finds it behind a local --probe URL, or the first URL in its --latency file or in the command after --)"
		return nil, st, nil
	default:
		var why []string
		for _, t := range targets {
			found, err := f.FromURL(ctx, t.URL, t.How)
			if err == nil {
				v = found
				if t.How != record.VictimFromProbe {
					v.Detail = t.URL + " in " + t.From + "; " + v.Detail
				}
				break
			}
			if !errors.Is(err, ErrNotFound) {
				st.Reason = "reading the host: " + err.Error() + "; pass --victim PID|UNIT|CGROUP"
				return nil, st, nil
			}
			why = append(why, "not found from "+t.From+": "+err.Error())
		}
		if v == nil {
			st.Reason = strings.Join(why, "; ")
			if !strings.Contains(st.Reason, "--victim") {
				st.Reason += "; pass --victim PID|UNIT|CGROUP"
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
