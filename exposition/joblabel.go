package exposition

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/timers"
)

// LocationLabel is the label of memdiag_job_info that says where a job is
// defined: its file and, for a crontab or anacrontab line, the line
// ("/etc/cron.d/sysstat:5"). Only the info metric carries it, so editing a
// crontab above a job changes one info series, not the job's history.
const LocationLabel = "location"

// maxCommandLabel bounds the command part of a cron job's label (runes).
const maxCommandLabel = 100

// jobLabels maps each job's Name to its periodic_job label value, a name
// that survives editing the file around the job:
//
//   - a systemd timer: its unit name (pmlogger_check.timer); an anacron
//     job: its name, as memdiag timers shows them;
//   - a cron job: the crontab it is in and its command, "cron.d/sysstat:
//     command -v debian-sa1 > /dev/null && debian-sa1 1 1", not the
//     file:line of its Name (cron.d/sysstat:5), which a line added above
//     it would change, renaming every series of the job. The command is
//     what the job is: an edit of it makes a new job. Two lines of one file
//     with the same command (two schedules) are told apart by " (2)",
//     " (3)" in file order. A command longer than 100 characters is cut,
//     with a hash of the whole so that two long commands stay apart.
func jobLabels(jobs []record.Job) map[string]string {
	out := make(map[string]string, len(jobs))
	used := map[string]int{}
	for _, j := range jobs {
		if _, ok := out[j.Name]; ok {
			continue
		}
		l := j.Name
		if j.Source == timers.Cron && strings.TrimSpace(j.Command) != "" && len(j.Errors) == 0 {
			l = cronFile(j) + ": " + commandLabel(j.Command)
			used[l]++
			if n := used[l]; n > 1 {
				l += " (" + strconv.Itoa(n) + ")"
			}
		}
		out[j.Name] = l
	}
	return out
}

// cronFile is a cron job's Name without its ":LINE" (cron.d/sysstat,
// crontab, crontabs/alice).
func cronFile(j record.Job) string {
	if i := strings.LastIndexByte(j.Name, ':'); i > 0 && j.Name[i+1:] == strconv.Itoa(j.Line) {
		return j.Name[:i]
	}
	return j.Name
}

// commandLabel is a command with its runs of white space made one space,
// cut to maxCommandLabel runes.
func commandLabel(cmd string) string {
	c := strings.Join(strings.Fields(cmd), " ")
	if utf8.RuneCountInString(c) <= maxCommandLabel {
		return c
	}
	h := fnv.New32a()
	h.Write([]byte(c))
	r := []rune(c)
	return fmt.Sprintf("%s… #%08x", string(r[:maxCommandLabel-12]), h.Sum32())
}

// jobLocation is the job's file, and line when it has one, as an absolute
// path on the host ("/etc/cron.d/sysstat:5", "/lib/systemd/system/apt-daily.timer").
func jobLocation(j record.Job) string {
	if j.File == "" {
		return ""
	}
	l := "/" + strings.TrimPrefix(j.File, "/")
	if j.Line > 0 {
		l += ":" + strconv.Itoa(j.Line)
	}
	return l
}
