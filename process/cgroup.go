package process

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

// containerRuntimes are the first path components container runtimes'
// cgroupfs drivers create (no systemd unit): docker, containerd,
// Kubernetes (kubelet's cgroupfs driver) and podman.
var containerRuntimes = []string{"docker", "kubepods", "containerd", "libpod"}

// unitFromCgroup is memdiag's one mapper from a cgroup path to the unit a
// process runs under, used by every list (per-process I/O, process
// events, mem's processes), so a process belongs to the same job
// everywhere. It returns the systemd unit: the last path component that
// is a unit name, so that sub-cgroups a service creates below its own
// (delegation) still map to the service — services, timers' services,
// cron's session scopes, docker/containerd/kubepods scopes of the systemd
// cgroup driver. Without a unit, a container runtime's cgroupfs path
// ("/docker/<id>", "/kubepods/<qos>/pod<uid>/<id>") maps to the runtime's
// component and the container: "docker/<id>". "" when nothing fits (the
// root "/", a cgroup namespace's "/", a group of one's own).
//
//	/system.slice/pmlogger_check.service             -> pmlogger_check.service
//	/system.slice/docker-4f1c….scope                 -> docker-4f1c….scope
//	/user.slice/user-1000.slice/session-3.scope      -> session-3.scope
//	/machine.slice/libpod-9a2b….scope/container      -> libpod-9a2b….scope
//	/docker/4f1c…                                    -> docker/4f1c…
//	/kubepods/besteffort/pod8e1f/77aa…               -> kubepods/77aa…
func unitFromCgroup(path string) string {
	if u := systemdUnit(path); u != "" {
		return u
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if len(parts) < 2 {
		return ""
	}
	for _, rt := range containerRuntimes {
		if strings.HasPrefix(parts[0], rt) {
			return parts[0] + "/" + parts[len(parts)-1]
		}
	}
	return ""
}

// systemdUnit is the last component of path that is a systemd unit name.
func systemdUnit(path string) string {
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
// parseCgroup. procevents, diskio and memstate use it, so a process has
// the same cgroup and unit in every list.
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
	eachCgroup(b, func(id, ctrl, p []byte) {
		switch {
		case string(id) == "0" && len(ctrl) == 0:
			unified, haveUnified = string(p), true
		case string(ctrl) == "name=systemd":
			systemd, haveSystemd = string(p), true
		}
	})
	if u := systemdUnit(unified); u != "" {
		return unified, u
	}
	if u := systemdUnit(systemd); u != "" {
		return systemd, u
	}
	switch {
	case haveUnified:
		return unified, unitFromCgroup(unified)
	case haveSystemd:
		return systemd, unitFromCgroup(systemd)
	}
	return "", ""
}

// ControllerPath is the cgroup that governs controller ctrl ("memory",
// "cpu") for the process whose /proc/PID/cgroup content is b: the path of
// the v1 hierarchy that lists ctrl (v1 true) when there is one, else the
// unified ("0::") path; "" when b has neither. The unit of the process is
// ParseCgroupFile's, whichever hierarchy governs a controller.
func ControllerPath(b []byte, ctrl string) (path string, v1 bool) {
	var found bool
	eachCgroup(b, func(id, ctrls, p []byte) {
		if found {
			return
		}
		if string(id) == "0" && len(ctrls) == 0 {
			path = string(p)
			return
		}
		for c := range bytes.SplitSeq(ctrls, []byte{','}) {
			if string(c) == ctrl {
				path, v1, found = string(p), true, true
				return
			}
		}
	})
	return path, v1
}

// eachCgroup calls fn with the fields of each well-formed line of b,
// "hierarchy-ID:controller-list:cgroup-path"; the path itself may contain
// ':'. Lines without two colons are skipped.
func eachCgroup(b []byte, fn func(id, ctrls, path []byte)) {
	for len(b) > 0 {
		var line []byte
		line, b, _ = bytes.Cut(b, []byte{'\n'})
		id, rest, ok := bytes.Cut(line, []byte{':'})
		if !ok {
			continue
		}
		ctrls, p, ok := bytes.Cut(rest, []byte{':'})
		if !ok {
			continue
		}
		fn(id, ctrls, p)
	}
}
