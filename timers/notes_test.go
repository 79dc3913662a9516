package timers

import "testing"

// TestNoteFor: a known job's note is found by what a job runs — a
// timer's unit name, a crontab line's command — never by the crontab
// file's name (a new user's cron.d/backup file held a rotate.sh line
// that was noted as a backup).
func TestNoteFor(t *testing.T) {
	for _, c := range []struct {
		job  Job
		want bool
	}{
		{Job{Name: "cron.d/backup:2", Source: Cron, Command: "/usr/local/bin/rotate.sh"}, false},
		{Job{Name: "cron.d/backup:1", Source: Cron, Command: "/usr/local/bin/backup.sh"}, true},
		{Job{Name: "cron.d/pcp-pmlogger:8", Source: Cron, Command: "[ -z \"$PCP_DIR\" ] && /usr/libexec/pcp/bin/pmlogger_check -C"}, true},
		{Job{Name: "pmlogger_check.timer", Source: Systemd, Unit: "pmlogger_check.service", Command: "/usr/lib/pcp/bin/pmlogger_check $PMLOGGER_CHECK_PARAMS"}, true},
	} {
		if got := noteFor(c.job); (got != "") != c.want {
			t.Errorf("noteFor(%s, %q) = %q; want a note: %v", c.job.Name, c.job.Command, got, c.want)
		}
	}
}
