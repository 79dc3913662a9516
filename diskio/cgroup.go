package diskio

// /proc/PID/cgroup has one line per hierarchy,
// "hierarchy-ID:controller-list:cgroup-path":
//
//	4:memory:/process_api/c94b1ad2b6cff9addecf9ee6e05d8f5f
//	1:name=systemd:/system.slice/cron.service
//	0::/system.slice/cron.service
//
// The "0::" line is the cgroup v2 (unified) hierarchy; "name=systemd" is
// the named v1 hierarchy systemd keeps on legacy and hybrid hosts. Sources:
// cgroups(7) "/proc/[pid]/cgroup", https://docs.kernel.org/admin-guide/cgroup-v2.html,
// https://systemd.io/CGROUP_DELEGATION/ (how systemd names cgroups after
// units).

import (
	"bytes"
	"strings"
)

// unitSuffixes are the systemd unit types whose cgroups hold processes:
// services, scopes and slices, plus the helpers run for mount, swap and
// socket units (ExecMount=, ExecStartPre= of a socket). systemd.unit(5).
var unitSuffixes = []string{".service", ".scope", ".slice", ".mount", ".swap", ".socket"}

// UnitFromCgroup returns the systemd unit a cgroup path belongs to: the
// last path component that is a unit name, so that sub-cgroups a service
// creates below its own (delegation) still map to the service. It returns
// "" when no component is a unit (the root "/", docker's cgroupfs driver
// "/docker/<id>", a cgroup namespace's "/").
//
//	/system.slice/pmlogger_check.service             -> pmlogger_check.service
//	/system.slice/docker-4f1c….scope                 -> docker-4f1c….scope
//	/user.slice/user-1000.slice/session-3.scope      -> session-3.scope
//	/machine.slice/libpod-9a2b….scope/container      -> libpod-9a2b….scope
func UnitFromCgroup(path string) string {
	for path != "" {
		i := strings.LastIndexByte(path, '/')
		comp := path[i+1:]
		for _, s := range unitSuffixes {
			if len(comp) > len(s) && strings.HasSuffix(comp, s) {
				return comp
			}
		}
		if i < 0 {
			break
		}
		path = path[:i]
	}
	return ""
}

// ParseCgroupFile is the one parser of /proc/PID/cgroup (b is its
// content): the cgroup path of the process and its unit, by the rules of
// parseCgroup. procevents and diskio both use it, so a process has the
// same cgroup and unit in every list.
func ParseCgroupFile(b []byte) (path, unit string) { return parseCgroup(b) }

// parseCgroup picks the cgroup path of a process from the content of
// /proc/PID/cgroup and derives its unit. It prefers the cgroup v2 ("0::")
// path; when that path names no unit (a hybrid host where the process sits
// in the v2 root, or a legacy host with no "0::" line) it takes the
// name=systemd path if that names one. Without any unit the v2 path is
// returned, else the name=systemd path, else "".
func parseCgroup(b []byte) (path, unit string) {
	var unified, systemd string
	var haveUnified, haveSystemd bool
	for len(b) > 0 {
		var line []byte
		line, b = cutLine(b)
		// hierarchy-ID:controllers:path; the path itself may contain ':'.
		i := bytes.IndexByte(line, ':')
		if i < 0 {
			continue
		}
		j := bytes.IndexByte(line[i+1:], ':')
		if j < 0 {
			continue
		}
		id, ctrl, p := line[:i], line[i+1:i+1+j], line[i+2+j:]
		switch {
		case string(id) == "0" && len(ctrl) == 0:
			unified, haveUnified = string(p), true
		case string(ctrl) == "name=systemd":
			systemd, haveSystemd = string(p), true
		}
	}
	if u := UnitFromCgroup(unified); u != "" {
		return unified, u
	}
	if u := UnitFromCgroup(systemd); u != "" {
		return systemd, u
	}
	switch {
	case haveUnified:
		return unified, ""
	case haveSystemd:
		return systemd, ""
	}
	return "", ""
}
