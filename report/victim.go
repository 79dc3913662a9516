package report

import (
	"fmt"
	"path/filepath"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/report/psinote"
)

// Victim scopes, jsonVictim.Scope: whose PSI the recording holds as the
// cgroup's.
const (
	victimOwnCgroup   = "own_cgroup"   // the victim's v2 group
	victimGivenCgroup = "given_cgroup" // --cgroup, another group
	victimHost        = "host"         // no cgroup: the host's PSI only
)

// jsonVictim is the analysis JSON's "victim": the recorded victim
// (record.Victim's fields), whose PSI the cgroup scope is, and the
// recorder's note. Found is false, with only Note, when the recorder
// looked and found none.
type jsonVictim struct {
	Found bool `json:"found"`
	*record.Victim
	Scope string `json:"scope,omitempty"`
	Note  string `json:"note,omitempty"`
}

// victimJSON is r's jsonVictim; nil for recordings with no victim lookup.
func victimJSON(r *correlate.Result) *jsonVictim {
	switch {
	case r.Victim != nil:
		return &jsonVictim{Found: true, Victim: r.Victim, Scope: victimScope(r), Note: r.VictimNote}
	case r.VictimNote != "":
		return &jsonVictim{Note: r.VictimNote}
	}
	return nil
}

func victimScope(r *correlate.Result) string {
	v := r.Victim
	switch {
	case r.Cgroup == "":
		return victimHost
	case v.CgroupDir != "" && filepath.Clean(r.Cgroup) == filepath.Clean(v.CgroupDir):
		return victimOwnCgroup
	}
	return victimGivenCgroup
}

// victimLine is the header line naming the victim, how it was found and
// whose PSI the scope is:
//
//	Victim: websvc (pid 4242), found from --probe: 127.0.0.1:8080 is a listening socket of websvc (pid 4242); scope: its cgroup /x.slice/web.service
//
// "" for recordings with no victim lookup (made before it, or by gate
// without --victim).
func victimLine(r *correlate.Result) string {
	v := r.Victim
	if v == nil {
		if r.VictimNote == "" {
			return ""
		}
		return "Victim: not found (" + r.VictimNote + ")"
	}
	name := v.Unit
	switch {
	case v.PID != 0 && v.Comm != "":
		name = fmt.Sprintf("%s (pid %d)", v.Comm, v.PID)
	case v.PID != 0:
		name = fmt.Sprintf("pid %d", v.PID)
	case name == "":
		name = "cgroup " + v.Cgroup
	}
	how := "given with --victim"
	switch v.How {
	case record.VictimFromProbe:
		how = "found from --probe"
	case record.VictimFromLatency:
		how = "found from the --latency file's target"
	case record.VictimFromCommand:
		how = "found from the wrapped command's target"
	}
	line := "Victim: " + name + ", " + how
	if v.Detail != "" && v.How != record.VictimGiven {
		line += ": " + v.Detail
	}
	switch victimScope(r) {
	case victimOwnCgroup:
		line += "; scope: its cgroup " + v.Cgroup
	case victimGivenCgroup:
		line += "; scope: --cgroup " + r.Cgroup + " (given), not its own group"
	default:
		line += "; scope: the host"
	}
	if v.MemcgDir != "" && filepath.Clean(v.Memcg) != "/" {
		kind := "memory cgroup"
		if v.MemcgVersion == 1 {
			kind = "v1 memory cgroup"
		}
		line += "; memory: its " + kind + " " + v.Memcg
		switch {
		case v.Limit == "":
			line += ", no memory limit up to the root (only host-wide reclaim reaches it)"
		case filepath.Clean(v.Limit) == filepath.Clean(v.Memcg):
			line += fmt.Sprintf(", limited to %s", correlate.FormatBytes(v.LimitBytes))
		default:
			line += fmt.Sprintf(", limited to %s with every group under %s", correlate.FormatBytes(v.LimitBytes), v.Limit)
		}
		for _, o := range v.OuterLimits {
			line += fmt.Sprintf(", and to %s with every group under %s", correlate.FormatBytes(o.Bytes), o.Group)
		}
	}
	if r.VictimNote != "" {
		line += " (" + r.VictimNote + ")"
	}
	return line
}

// scopeLimitLine is "Scope: --cgroup DIR, memory limited to …" when the
// recording's cgroup scope is bounded by a memory limit that no victim
// line states (no victim, or a --cgroup other than its group): the
// limit is what a group's stall usually means (issue 30.3). "" else.
func scopeLimitLine(r *correlate.Result) string {
	if r.Cgroup == "" || r.CgroupLimit == "" || (r.Victim != nil && victimScope(r) == victimOwnCgroup) {
		return ""
	}
	return "Scope: --cgroup " + r.Cgroup + psinote.LimitNote(r.Cgroup, r.CgroupLimit, r.CgroupLimitBytes)
}

// victimHint says how to give the recording a victim when it has none,
// its scope is the host's memory pressure and the verdict is weak (no
// culprit for its episodes, or none named with high confidence): a
// host's PSI is raised by any process on it, and a recording that names
// the service judges the service's own stall and memory group instead.
// "" otherwise.
func victimHint(r *correlate.Result) string {
	if r.Victim != nil || r.Cgroup != "" || r.PSIScope == correlate.PSICgroup || len(r.Episodes) == 0 {
		return ""
	}
	if len(r.Culprits) > 0 && r.Culprits[0].ConfidenceLabel() == "high" {
		return ""
	}
	return "No victim recorded: this verdict weighs the host's memory pressure, which any " +
		"process can raise. To judge one service's own stalls, record naming it: " +
		"memdiag watch --out run.jsonl --victim web.service -- ./load-test.sh " +
		"(a unit, a PID or a cgroup directory; a local --probe URL finds it by itself)."
}
