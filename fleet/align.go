package fleet

import (
	"fmt"
	"sort"
	"time"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/internal/english"
)

// HostResult is one host's analysis.
type HostResult struct {
	Host string
	Res  correlate.Result
}

// Aligned is the episodes of several hosts that began within one
// tolerance of each other on the wall clock: one fleet-wide event.
type Aligned struct {
	At    time.Time `json:"at"`    // the earliest start
	Hosts []string  `json:"hosts"` // hosts with an episode in it, sorted
	Of    int       `json:"of"`    // hosts analysed
	// Job is the culprit the most of those hosts named for their episode,
	// "" when none named one; JobHosts is how many named it.
	Job      string `json:"job,omitempty"`
	JobHosts int    `json:"job_hosts,omitempty"`
}

// Align groups the hosts' episodes whose starts lie within tol of the
// group's first start (one minute: "the same wall-clock minute", without
// splitting 06:24:59 from 06:25:01), earliest first. A host counts once
// per group.
func Align(rs []HostResult, tol time.Duration) []Aligned {
	type ep struct {
		start   time.Time
		host    string
		culprit string
	}
	var eps []ep
	for _, r := range rs {
		for _, e := range r.Res.Episodes {
			eps = append(eps, ep{e.Start, r.Host, e.Culprit})
		}
	}
	sort.SliceStable(eps, func(i, j int) bool { return eps[i].start.Before(eps[j].start) })
	var out []Aligned
	for i := 0; i < len(eps); {
		first := eps[i].start
		hosts := map[string]string{} // host → its culprit for this group
		j := i
		for ; j < len(eps) && eps[j].start.Sub(first) <= tol; j++ {
			if c, ok := hosts[eps[j].host]; !ok || c == "" {
				hosts[eps[j].host] = eps[j].culprit
			}
		}
		a := Aligned{At: first, Of: len(rs)}
		votes := map[string]int{}
		for h, c := range hosts {
			a.Hosts = append(a.Hosts, h)
			if c != "" {
				votes[c]++
			}
		}
		sort.Strings(a.Hosts)
		for c, n := range votes {
			if n > a.JobHosts || (n == a.JobHosts && c < a.Job) {
				a.Job, a.JobHosts = c, n
			}
		}
		out = append(out, a)
		i = j
	}
	return out
}

// Line is the group as one line: "14 of 16 hosts: cron.daily at 06:25
// UTC", the job named once; "(named on 12 of them)" when not every host
// in the group named it. The time is to the minute, or to the second when
// the alignment tolerance tol is shorter than a minute.
func (a Aligned) Line(loc *time.Location, tol time.Duration) string {
	at := a.At.In(loc).Format("15:04 MST")
	if tol < time.Minute {
		at = a.At.In(loc).Format("15:04:05 MST")
	}
	head := fmt.Sprintf("%d of %s", len(a.Hosts), english.Count(a.Of, "host"))
	if a.Job == "" {
		return fmt.Sprintf("%s: an episode at %s, no culprit named", head, at)
	}
	s := fmt.Sprintf("%s: %s at %s", head, a.Job, at)
	if a.JobHosts < len(a.Hosts) {
		s += fmt.Sprintf(" (named on %d of them)", a.JobHosts)
	}
	return s
}

// Report is what `analyze --prometheus` shows (report.RenderFleet): each
// host's analysis, then the fleet's episodes aligned across hosts.
type Report struct {
	Data     *Data     // what was read: the server, the steps, warnings
	From, To time.Time // the window read
	// Results and Hosts are each host's analysis and its data, in the
	// same order (analysis.Fleet).
	Results []HostResult
	Hosts   []*Host
	Aligned []Aligned     // Align of Results
	Align   time.Duration // the tolerance Aligned was made with
}
