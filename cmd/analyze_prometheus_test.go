package cmd

import (
	"strings"
	"testing"
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
