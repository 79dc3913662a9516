package cmd

import (
	"strings"
	"testing"
	"time"
)

func TestAnalyzePrometheusBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"analyze", "--prometheus", "prom:9090"}, exitUsage, `--prometheus "prom:9090": want an http:// or https:// URL`},
		{[]string{"analyze", "--prometheus", "http://127.0.0.1:9", "run.jsonl"}, exitUsage, `give no recording (got "run.jsonl")`},
		{[]string{"analyze", "--prometheus", "http://127.0.0.1:9", "--format", "csv"}, exitUsage, "--prometheus writes table, markdown or json"},
		{[]string{"analyze", "--prometheus", "http://127.0.0.1:9", "--from", "soon"}, exitUsage, `--from: `},
		{[]string{"analyze", "--prometheus", "http://127.0.0.1:9", "--from", "-1h", "--to", "-2h"}, exitUsage, "is not after --from"},
		// Port 9 (discard) refuses: the server cannot be reached.
		{[]string{"analyze", "--prometheus", "http://127.0.0.1:9", "--step", "1s"}, exitError, "--prometheus http://127.0.0.1:9: query {__name__=~"},
	} {
		code, _, stderr := runCmd(t, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.msg) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d with %q", tc.args, code, stderr, tc.code, tc.msg)
		}
	}
}

func TestPromWindow(t *testing.T) {
	now := time.Date(2026, 12, 1, 7, 0, 0, 0, time.UTC)
	f, to, err := promWindow("", "", now)
	if err != nil || !to.Equal(now) || !f.Equal(now.Add(-time.Hour)) {
		t.Errorf("default window %s..%s, %v", f, to, err)
	}
	f, to, err = promWindow("2026-12-01T06:20:00Z", "-30m", now)
	if err != nil || !f.Equal(now.Add(-40*time.Minute)) || !to.Equal(now.Add(-30*time.Minute)) {
		t.Errorf("window %s..%s, %v", f, to, err)
	}
	f, _, err = promWindow("-2d", "now", now)
	if err != nil || !f.Equal(now.Add(-48*time.Hour)) {
		t.Errorf("-2d: %s, %v", f, err)
	}
}
