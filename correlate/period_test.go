package correlate

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdiag/memdiag/timers"
)

func minutes(ms ...float64) []time.Time {
	out := make([]time.Time, len(ms))
	for i, m := range ms {
		out[i] = t0.Add(time.Duration(m * float64(time.Minute)))
	}
	return out
}

func TestEstimatePeriod(t *testing.T) {
	end := t0.Add(2 * time.Hour)
	tests := []struct {
		name    string
		times   []time.Time
		want    time.Duration // 0: no period
		matched int
		missed  int
		extra   int
	}{
		{name: "exact 10 min", times: minutes(5, 15, 25, 35, 45, 55, 65, 75, 85, 95, 105, 115),
			want: 10 * time.Minute, matched: 12},
		// 7-hourly VACUUM seen over a day is tested through Analyze; here an
		// hourly job over 2 h has too few points to be a pattern.
		{name: "two points", times: minutes(30, 90)},
		// Every 20 min, but only every other 10-min slot: 20 min, not 10.
		{name: "no halving", times: minutes(5, 25, 45, 65, 85, 105), want: 20 * time.Minute, matched: 6},
		// Missing two of twelve and two strays still gives 10 min.
		{name: "missed and extra", times: minutes(5, 15, 25, 38, 45, 65, 75, 82, 95, 105, 115),
			want: 10 * time.Minute, matched: 9, missed: 3, extra: 2},
		{name: "irregular", times: minutes(7, 19, 52, 63, 101, 107)},
		{name: "empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := estimatePeriod(tt.times, t0, end, 2*time.Minute)
			if tt.want == 0 {
				if p != nil {
					t.Fatalf("period = %v (%+v), want none", p.Period, *p)
				}
				return
			}
			if p == nil {
				t.Fatalf("no period, want %v", tt.want)
			}
			if d := p.Period - tt.want; d < -time.Second || d > time.Second {
				t.Errorf("period = %v, want %v", p.Period, tt.want)
			}
			if p.Matched != tt.matched || p.Missed != tt.missed || p.Extra != tt.extra {
				t.Errorf("matched/missed/extra = %d/%d/%d, want %d/%d/%d", p.Matched, p.Missed, p.Extra, tt.matched, tt.missed, tt.extra)
			}
		})
	}
}

func TestParseSpikeRule(t *testing.T) {
	for in, want := range map[string]SpikeRule{
		"500ms": {Floor: 500 * time.Millisecond},
		"2s":    {Floor: 2 * time.Second},
		"3x":    {Factor: 3},
		"2.5X":  {Factor: 2.5},
		"":      DefaultSpikeRule,
	} {
		got, err := ParseSpikeRule(in)
		if err != nil || got != want {
			t.Errorf("ParseSpikeRule(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"1x", "0.5x", "fast", "-1s", "x"} {
		if _, err := ParseSpikeRule(bad); err == nil {
			t.Errorf("ParseSpikeRule(%q) accepted", bad)
		}
	}
	if _, err := ParseStat("p50"); err == nil {
		t.Error(`ParseStat("p50") accepted`)
	}
	if s, err := ParseStat("MAX"); err != nil || s != StatMax {
		t.Errorf(`ParseStat("MAX") = %q, %v`, s, err)
	}
}

func TestJobPrograms(t *testing.T) {
	tests := []struct {
		job  timers.Job
		want []string
	}{
		// Debian pcp's /etc/cron.d/pcp-pmlogger line: the test's argument
		// is data, the program after && runs.
		{timers.Job{Command: "[ -x /usr/libexec/pcp/bin/pmlogger_check ] && /usr/libexec/pcp/bin/pmlogger_check -C"},
			[]string{"pmlogger_check"}},
		// Debian's /etc/crontab daily line: anacron is tested, not run;
		// run-parts runs the scripts.
		{timers.Job{Command: "test -x /usr/sbin/anacron || ( cd / && run-parts --report /etc/cron.daily )",
			Scripts: []string{"/etc/cron.daily/logrotate", "/etc/cron.daily/man-db"}},
			[]string{"logrotate", "man-db"}},
		{timers.Job{Command: "/usr/libexec/pcp/bin/pmlogger_farm_check"}, []string{"pmlogger_farm_check"}},
		{timers.Job{Command: "-/usr/bin/env FOO=1 nice -n 19 /opt/app/bin/compact --all"}, []string{"compact"}},
		// An interpreter is no identity; its script is.
		{timers.Job{Command: "python3 /opt/report/nightly.py --all"}, []string{"nightly.py"}},
		{timers.Job{Command: "/bin/sh -c 'sleep 5; /usr/local/bin/backup.sh /var/lib/postgresql'"}, []string{"sleep", "backup.sh"}},
		// man-db's unit: find's arguments are data, never programs.
		{timers.Job{Command: "/usr/bin/find /var/cache/man -type f -name *.gz -atime +6 -delete"}, []string{"find"}},
	}
	for _, tt := range tests {
		if d := cmp.Diff(tt.want, jobPrograms(&tt.job)); d != "" {
			t.Errorf("jobPrograms(%q) (-want +got):\n%s", tt.job.Command, d)
		}
	}
	for _, tt := range []struct{ comm, cmdline, want string }{
		{"python3", "python3 pressure.py --mib 300", "pressure.py"},
		{"sh", "/bin/sh /usr/local/bin/backup.sh --full", "backup.sh"},
		{"backup.sh", "/bin/sh /usr/local/bin/backup.sh --full", "backup.sh"},
		{"bash", "bash -c while true; do :; done", "bash"},
		{"postgres", "/usr/lib/postgresql/15/bin/postgres -D /var/lib/postgresql/15/main", "postgres"},
		{"pmlogger_farm_c", "", "pmlogger_farm_c"},
		{"nginx", "nginx: worker process", "nginx"},
		{"python3.11", "/usr/bin/python3.11 -u /opt/x/job.py", "job.py"},
		// A script from a file descriptor (bash /dev/fd/3, as the tool
		// runner of trial s7 ran): the interpreter, never "3".
		{"bash", "bash /dev/fd/3", "bash"},
		{"sh", "sh /proc/self/fd/0 x", "sh"},
	} {
		if got := programOf(tt.comm, tt.cmdline); got != tt.want {
			t.Errorf("programOf(%q, %q) = %q, want %q", tt.comm, tt.cmdline, got, tt.want)
		}
	}
	j := timers.Job{Name: "pmlogger_check.timer", Source: timers.Systemd}
	if d := cmp.Diff([]string{"pmlogger_check.service"}, jobUnits(&j)); d != "" {
		t.Errorf("jobUnits (-want +got):\n%s", d)
	}
}
