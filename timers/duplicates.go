package timers

import (
	"path"
	"regexp"
	"strings"
	"time"
)

// Duplicates finds programs that run from two or more definitions in
// different files — a systemd timer and a cron line, two cron.d files —
// with the same command ([commandKey]: guards that only check the
// program exists dropped, the program compared by name). Only jobs that
// run count ([Runs]): Debian's cron.d/sysstat line, whose debian-sa1
// exits while systemd runs, is not a second run of sysstat-collect.timer.
// Nor does a schedule that never matches after base ([Never], with loc
// the zone of jobs that name none). Each is one Duplicate, definitions
// in job order; report/timersreport says it as a problem line ("runs
// twice: A (10m) and B (5m): sa1 1 1").
func Duplicates(jobs []Job, base time.Time, loc *time.Location) []Duplicate {
	byKey := map[string][]int{}
	var keys []string
	for i := range jobs {
		j := &jobs[i]
		if len(j.Errors) > 0 {
			continue
		}
		if runs, _ := Runs(j); !runs || Never(*j, base, loc) {
			continue
		}
		k := commandKey(j.Command)
		if k == "" {
			continue
		}
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], i)
	}
	var out []Duplicate
	for _, k := range keys {
		idx := byKey[k]
		files := map[string]bool{}
		for _, i := range idx {
			files[jobs[i].File] = true
		}
		if len(files) < 2 {
			continue // lines of one crontab: as written, on purpose
		}
		d := Duplicate{Command: k}
		for _, i := range idx {
			d.Jobs = append(d.Jobs, jobs[i])
		}
		out = append(out, d)
	}
	return out
}

// Duplicate is a program that runs from two or more definitions: the
// command as compared ([commandKey]) and its jobs, in job order.
type Duplicate struct {
	Command string
	Jobs    []Job
}

// guard is a test that the program exists before running it:
// "command -v sa1 > /dev/null && ", "test -x /usr/bin/x && ",
// "[ -x /usr/bin/x ] && ", "which x >/dev/null 2>&1 && ".
var guard = regexp.MustCompile(`^(?:command\s+-v|which|type|test\s+-[xef]|\[\s+-[xef])\s+(\S+)(?:\s+\])?(?:\s*[12]?>\s*/dev/null|\s*2>&1)*\s*&&\s*`)

// commandKey is a command as compared by [Duplicates]: systemd's ExecStart=
// prefixes ("-", "@", "+", "!", ":") and guards that test for the program
// it then runs dropped, the program by its base name, words separated by
// one space. "command -v sa1 > /dev/null && sa1 1 1" and
// "/usr/lib/sysstat/sa1 1 1" are both "sa1 1 1".
func commandKey(cmd string) string {
	s := strings.TrimSpace(cmd)
	for {
		m := guard.FindStringSubmatchIndex(s)
		if m == nil {
			break
		}
		rest := strings.TrimSpace(s[m[1]:])
		f := strings.Fields(rest)
		if len(f) == 0 || path.Base(f[0]) != path.Base(s[m[2]:m[3]]) {
			break // a guard on something else: part of the command
		}
		s = rest
	}
	s = strings.TrimLeft(s, "-@+!:")
	f := strings.Fields(s)
	if len(f) == 0 {
		return ""
	}
	f[0] = path.Base(f[0])
	return strings.Join(f, " ")
}
