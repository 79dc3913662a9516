package mem

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"

	"github.com/memdiag/memdiag/memstate"
)

// renderCSV writes r in long form, one value per row:
//
//	section,id,field,value
//	host,,total_bytes,25276510208
//	cgroup,/memdiag-oom,events.oom_kill,1
//	process,750,rss_anon_bytes,19263488
//	oom_kill,846,anon_rss_bytes,158277632
//
// Fields are the JSON names (units in the name: _bytes, _pages, _ns);
// nested objects are joined with dots. Sections: host, tmpfs (id: mount
// point), psi_memory, activity, verdict, process (id: PID), cgroup (id:
// path), oom_kill (id: PID), oom_counter (id: "/proc/vmstat" or a
// cgroup's path), warning.
func renderCSV(w io.Writer, r memstate.Report) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"section", "id", "field", "value"})
	emit := func(section, id string, v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		var m any // numbers kept as written: bytes exceed float64's 2^53
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil {
			return err
		}
		flatten(m, "", func(field, value string) { cw.Write([]string{section, id, field, value}) })
		return nil
	}
	host := r.Host
	tmpfs := host.Tmpfs
	host.Tmpfs = nil
	type step struct {
		section, id string
		v           any // nil pointers marshal to null and emit nothing
	}
	steps := []step{{"host", "", host}, {"psi_memory", "", r.PSI}, {"activity", "", r.Activity}, {"verdict", "", r.Verdict}}
	for _, m := range tmpfs {
		steps = append(steps, step{"tmpfs", m.MountPoint, m})
	}
	for _, p := range r.Procs {
		steps = append(steps, step{"process", strconv.Itoa(p.PID), p})
	}
	for _, c := range r.Cgroups {
		steps = append(steps, step{"cgroup", c.Path, c})
	}
	for _, k := range r.OOM.Kills {
		steps = append(steps, step{"oom_kill", strconv.Itoa(k.PID), k})
	}
	for _, s := range steps {
		if err := emit(s.section, s.id, s.v); err != nil {
			return err
		}
	}
	if r.OOM.VMStatOOMKills != nil {
		cw.Write([]string{"oom_counter", "/proc/vmstat", "oom_kill", strconv.FormatUint(*r.OOM.VMStatOOMKills, 10)})
	}
	for _, c := range r.OOM.CgroupOOMKills {
		cw.Write([]string{"oom_counter", c.Path, "oom_kill", strconv.FormatUint(c.OOMKills, 10)})
	}
	if r.OOM.LogUnreadable != "" {
		cw.Write([]string{"warning", "kernel log", "unreadable", r.OOM.LogUnreadable})
	}
	for _, s := range suspectTexts(r, nil) {
		cw.Write([]string{"warning", "/proc/pressure/memory", "suspect_psi", s})
	}
	for _, w := range r.Warnings {
		cw.Write([]string{"warning", "", "", w})
	}
	cw.Flush()
	return cw.Error()
}

// flatten calls out for every scalar of a decoded JSON value, objects'
// keys sorted and joined with dots, array elements by index.
func flatten(v any, prefix string, out func(field, value string)) {
	join := func(k string) string {
		if prefix == "" {
			return k
		}
		return prefix + "." + k
	}
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			flatten(x[k], join(k), out)
		}
	case []any:
		for i, e := range x {
			flatten(e, join(strconv.Itoa(i)), out)
		}
	case nil:
	case string:
		out(prefix, x)
	case json.Number:
		out(prefix, x.String())
	default:
		out(prefix, fmt.Sprint(x))
	}
}
