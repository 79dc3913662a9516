package timers

// Activation: which units the manager starts at boot. A unit is started
// when it is reachable from the boot target through Wants=, Requires=,
// BindsTo=, Upholds= or links in NAME.wants/, NAME.requires/ and
// NAME.upholds/ (systemd.unit(5), systemd.special(7)). Enabling a timer
// usually links it from timers.target.wants/, but not always: Debian's pcp
// pulls pmlogger_check.timer in only through BindsTo= in pmlogger.service,
// and sysstat links sysstat-collect.timer from sysstat.service.wants/.

import (
	"fmt"
	"os"
	"strings"

	"github.com/memdiag/memdiag/internal/rootfs"
)

// activation is the result of a walk of the dependency graph from the boot
// targets: for each reached unit, the edge it was reached by.
type activation struct {
	set     *unitSet
	starts  []string
	reached map[string]dep    // unit -> edge it was first reached by (Name = parent)
	via     map[string]string // unit -> how (file:line or link)
}

// bootTargets returns the units the manager starts at boot: default.target
// (or, when the root has none, graphical.target, else multi-user.target),
// plus sysinit.target, basic.target and timers.target, which every boot
// reaches (systemd.special(7), bootup(7)).
func bootTargets(s *unitSet) []string {
	def := "default.target"
	if p, _ := s.find(def); p == "" {
		def = "graphical.target"
		if p, _ := s.find(def); p == "" {
			def = "multi-user.target"
		}
	}
	return []string{def, "sysinit.target", "basic.target", "timers.target"}
}

// walk does a breadth-first walk from starts so that each unit's chain is
// a shortest one.
func walk(s *unitSet, starts []string) *activation {
	a := &activation{set: s, starts: starts, reached: map[string]dep{}, via: map[string]string{}}
	queue := []string{}
	for _, st := range starts {
		if _, ok := a.reached[st]; ok {
			continue
		}
		a.reached[st] = dep{}
		queue = append(queue, st)
	}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		u := s.load(n)
		if u.Masked {
			continue
		}
		next := []string{}
		if u.Canon != n {
			// An alias (default.target -> graphical.target) stands for its
			// target, which pulls in the rest.
			if _, ok := a.reached[u.Canon]; !ok {
				a.reached[u.Canon] = dep{Name: n}
				a.via[u.Canon] = "link /" + u.Link
				queue = append(queue, u.Canon)
			}
			continue
		}
		for _, d := range s.unitDeps(u) {
			if _, ok := a.reached[d.Name]; ok {
				continue
			}
			a.reached[d.Name] = dep{Name: n}
			a.via[d.Name] = d.How
			next = append(next, d.Name)
		}
		queue = append(queue, next...)
	}
	return a
}

// chain returns the path from a boot target to name, one element per
// unit: "multi-user.target", "pmlogger.service (link etc/systemd/system/multi-user.target.wants/pmlogger.service)",
// "pmlogger_check.timer (BindsTo= in lib/systemd/system/pmlogger.service:6)".
// It is nil when name is not reached.
func (a *activation) chain(name string) []string {
	if _, ok := a.reached[name]; !ok {
		return nil
	}
	var out []string
	for n := name; n != ""; n = a.reached[n].Name {
		el := n
		if how := a.via[n]; how != "" {
			el += " (" + how + ")"
		}
		out = append([]string{el}, out...)
		if len(out) > 64 {
			break
		}
	}
	return out
}

// conditionResult evaluates one Condition*=/Assert*= setting on the root.
// It returns ok=false for conditions that depend on the running host
// (ConditionACPower=, ConditionVirtualization=, ...), which are shown but
// not checked.
func conditionResult(root, key, value string) (holds, ok bool) {
	v := strings.TrimPrefix(value, "|")
	neg := strings.HasPrefix(v, "!")
	v = strings.TrimPrefix(v, "!")
	kind := strings.TrimPrefix(strings.TrimPrefix(key, "Condition"), "Assert")
	// Every path is taken inside root, links and ".." included
	// (package rootfs): an image's conditions answer nothing about the host.
	var r bool
	switch kind {
	case "PathExists":
		_, err := rootfs.Stat(root, v)
		r = err == nil
	case "PathExistsGlob":
		m, _ := rootfs.Glob(root, v)
		r = len(m) > 0
	case "PathIsDirectory":
		fi, err := rootfs.Stat(root, v)
		r = err == nil && fi.IsDir()
	case "PathIsSymbolicLink":
		fi, err := rootfs.Lstat(root, v)
		r = err == nil && fi.Mode()&os.ModeSymlink != 0
	case "DirectoryNotEmpty":
		des, err := rootfs.ReadDir(root, v)
		r = err == nil && len(des) > 0
	case "FileNotEmpty":
		fi, err := rootfs.Stat(root, v)
		r = err == nil && fi.Mode().IsRegular() && fi.Size() > 0
	case "FileIsExecutable":
		fi, err := rootfs.Stat(root, v)
		r = err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
	default:
		return false, false
	}
	return r != neg, true
}

// evalConditions evaluates the unit's conditions and asserts. An empty
// assignment resets the whole list (systemd.unit(5)). Conditions prefixed
// with "|" are triggering: at least one of them must hold. It returns the
// rendered list and whether the unit will run ("unknown" conditions count
// as holding).
func evalConditions(root string, u *unitFile) ([]string, bool, string) {
	var conds []entry
	for _, e := range u.Entries {
		if e.Section != "Unit" || !(strings.HasPrefix(e.Key, "Condition") || strings.HasPrefix(e.Key, "Assert")) {
			continue
		}
		if e.Value == "" {
			conds = nil
			continue
		}
		conds = append(conds, e)
	}
	var out []string
	run := true
	failed := ""
	anyTrig, trigHolds := false, false
	for _, c := range conds {
		holds, ok := conditionResult(root, c.Key, c.Value)
		state := "not checked"
		if ok {
			state = fmt.Sprint(holds)
		}
		out = append(out, fmt.Sprintf("%s=%s: %s", c.Key, c.Value, state))
		trig := strings.HasPrefix(c.Value, "|")
		if trig {
			anyTrig = true
			if holds || !ok {
				trigHolds = true
			}
			continue
		}
		if ok && !holds && run {
			run = false
			failed = fmt.Sprintf("%s=%s is false (%s:%d)", c.Key, c.Value, c.File, c.Line)
		}
	}
	if anyTrig && !trigHolds && run {
		run = false
		failed = "no triggering (|) condition holds"
	}
	return out, run, failed
}
