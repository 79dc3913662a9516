package cmd

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/memdiag/memdiag/gate"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/report"
	"github.com/memdiag/memdiag/report/timersreport"
)

// TestSecretsNeverLeave plants a secret of every shape the redaction
// policy knows in a crontab, a timer's service unit, the --probe URL and
// the argv of a process that runs while watch records the live host, then
// greps the recording, every format of analyze, gate and timers, the
// JUnit file and stderr for them. None may appear; the places that held
// them must show "***" instead (so the test fails if nothing was
// recorded). Issue 29.3's shapes are among them: a token as a URL's user,
// Azure SAS sig= (in the probe URL too), Private-Token headers, --jwt and
// --bearer as two words, aws configure set aws_secret_access_key, htpasswd
// -b, Slack webhook paths, AWS access key ids. The same secrets are then
// grepped in a store that `record` wrote (its segments and analyze of
// it); TestAnalyzeRedactsRecordedSecrets has them in an old recording.
func TestSecretsNeverLeave(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	for _, d := range []string{"etc/cron.d", "etc/systemd/system/timers.target.wants", "opt"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The live host's /proc and /sys: the process with secrets in its
	// argv is a real one.
	for _, d := range []string{"proc", "sys"} {
		if err := os.Symlink("/"+d, filepath.Join(root, d)); err != nil {
			t.Fatal(err)
		}
	}
	write := func(rel, s string, mode os.FileMode) {
		if err := os.WriteFile(filepath.Join(root, rel), []byte(s), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("etc/crontab", `SHELL=/bin/sh
0 3 * * * root mysqldump -uroot -pCRONaSECRET --all-databases | gzip > /b.gz
*/5 * * * * root curl -s -H 'Authorization: Bearer CRONbSECRET' 'https://api.example.com/x?access_token=CRONcSECRET'
@daily root PGPASSWORD=CRONdSECRET pg_dump app
@hourly root /opt/sync --api-token=CRONeSECRET --cookie=CRONfSECRET https://u:CRONgSECRET@h.example.com/
@weekly root git clone https://ghp_CRONiSECRET@git.example.com/r.git; curl -H 'Private-Token: CRONjSECRET' 'https://a.blob.core.windows.net/c/b?sv=2022-11-02&sig=CRONkSECRET'
@monthly root aws configure set aws_secret_access_key CRONlSECRET; htpasswd -b /etc/h admin CRONmSECRET; curl https://hooks.slack.com/services/T0A1B2C3D/B4E5F6G7H/CRONnSECRET
@yearly root AWS_ACCESS_KEY_ID=AKIA2CRONSECRET7XYZQ /opt/tool --jwt CRONoSECRET --bearer CRONpSECRET
`, 0o644)
	write("etc/cron.d/bad", "* * * * root mysqldump -pCRONhSECRET\n", 0o644) // malformed: quoted in an error
	write("etc/systemd/system/backup.timer", "[Timer]\nOnCalendar=*:0/10\n", 0o644)
	write("etc/systemd/system/backup.service", "[Service]\nExecStart=/opt/backup --password UNITaSECRET --auth UNITbSECRET -k UNITcSECRET -P UNITdSECRET --pin UNITeSECRET --authorization=UNITfSECRET"+
		" https://glpat-UNITgSECRET@git.example.com/r.git --header Private-Token:UNIThSECRET https://a.blob.core.windows.net/c?sig=UNITiSECRET"+
		" https://hooks.slack.com/services/T0A1B2C3D/B4E5F6G7H/UNITjSECRET --jwt UNITkSECRET --bearer UNITlSECRET AKIA2UNITSECRET7XYZQ\n"+
		"ExecStartPost=/usr/bin/aws configure set aws_secret_access_key UNITmSECRET\nExecStartPost=/usr/bin/htpasswd -b /etc/h admin UNITnSECRET\n", 0o644)
	if err := os.Symlink("../backup.timer", filepath.Join(root, "etc/systemd/system/timers.target.wants/backup.timer")); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	probe := strings.Replace(srv.URL, "http://", "http://probeuser:PROBEaSECRET@", 1) + "/health?token=PROBEbSECRET&sv=2022-11-02&sig=PROBEcSECRET"

	job := filepath.Join(dir, "backup-job")
	// 4 s: as nobody (CI's fresh clone, at idle priority beside the
	// suite) watch polls /proc for new processes, and a 1.5 s job was
	// missed once in R28 when the poller got no CPU while it lived.
	if err := os.WriteFile(job, []byte("#!/bin/sh\nsleep 4\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	argv := []string{job, "--password", "ARGVaSECRET", "--auth", "ARGVbSECRET", "-k", "ARGVcSECRET", "-P", "ARGVdSECRET",
		"--pin", "ARGVeSECRET", "--authorization=ARGVfSECRET", "--cookie=ARGVgSECRET", "--api-token=ARGVhSECRET",
		"DB_PASSWORD=ARGViSECRET", "https://u:ARGVjSECRET@h.example.com/", "Authorization: Bearer ARGVkSECRET",
		"Cookie: sid=ARGVlSECRET; csrf=ARGVmSECRET",
		"https://ghp_ARGVnSECRET@git.example.com/r.git", "Private-Token: ARGVoSECRET", "https://a.blob.core.windows.net/c?sv=1&sig=ARGVpSECRET",
		"--jwt", "ARGVqSECRET", "--bearer", "ARGVrSECRET", "https://hooks.slack.com/services/T0A1B2C3D/B4E5F6G7H/ARGVsSECRET",
		"AWS_ACCESS_KEY_ID=AKIA2ARGVSECRET7XYZQ"}

	rec := filepath.Join(dir, "run.jsonl")
	code, out, errOut := runMemdiag(t, root, append([]string{"watch", "--interval", "250ms", "--out", rec, "--probe", probe, "--"}, argv...)...)
	if code != 0 {
		t.Fatalf("watch exit %d\nstderr: %s", code, errOut)
	}
	outputs := map[string]string{"watch stdout": out, "watch stderr": errOut}
	b, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	outputs["recording"] = string(b)

	// What the redacted places must show.
	r, err := record.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	if c := strings.Join(r.Header.Command, " "); !strings.Contains(c, "--password *** --auth *** -k *** -P ***") {
		t.Errorf("header command %q lacks the redacted options", c)
	}
	if !strings.Contains(r.Header.Probe, "probeuser:***@") || !strings.Contains(r.Header.Probe, "token=***") {
		t.Errorf("header probe %q", r.Header.Probe)
	}
	var sawUnit, sawCron, sawJob bool
	for _, j := range r.Header.Jobs {
		sawUnit = sawUnit || strings.Contains(j.Command, "/opt/backup --password *** --auth ***")
		sawCron = sawCron || strings.Contains(j.Command, "mysqldump -uroot -p***")
	}
	for _, s := range r.Samples {
		for _, p := range s.Procs {
			sawJob = sawJob || strings.Contains(p.Cmdline, "backup-job --password ***")
		}
		for _, e := range s.Events {
			sawJob = sawJob || strings.Contains(e.Cmdline, "backup-job --password ***")
		}
	}
	if !sawUnit || !sawCron {
		t.Errorf("header jobs lack the redacted unit (%v) or cron (%v) command: %+v", sawUnit, sawCron, r.Header.Jobs)
	}
	if !sawJob {
		t.Errorf("no sample or event holds the job's redacted command line")
	}

	written := []string{rec}
	for _, f := range report.Formats {
		_, o, e := runMemdiag(t, root, "analyze", rec, "--format", string(f))
		outputs["analyze "+string(f)] = o + e
		// The same report written with -o: the file too.
		file := filepath.Join(dir, "analyze."+string(f))
		_, _, e = runMemdiag(t, root, "analyze", rec, "--format", string(f), "-o", file)
		fb, _ := os.ReadFile(file)
		outputs["analyze -o "+string(f)] = e + string(fb)
		written = append(written, file)
	}
	for _, f := range gate.Formats {
		junit := filepath.Join(dir, "gate-"+string(f)+".xml")
		_, o, e := runMemdiag(t, root, "gate", "--recording", rec, "-t", "oom_kills==0", "--format", string(f), "--junit", junit)
		jb, _ := os.ReadFile(junit)
		outputs["gate "+string(f)] = o + e + string(jb)
		written = append(written, junit)
	}
	for _, f := range timersreport.Formats {
		_, o, e := runMemdiag(t, root, "timers", "--format", string(f))
		outputs["timers "+string(f)] = o + e
	}
	// A wrapped command that fails is quoted in gate's error and report.
	_, o, e := runMemdiag(t, root, "gate", "--out", filepath.Join(dir, "gate-run.jsonl"), "-t", "oom_kills==0", "--", "sh", "-c", "exit 3", "x", "--password", "GATEaSECRET")
	outputs["gate wrapped"] = o + e
	if !strings.Contains(e, "--password ***") {
		t.Errorf("gate's error does not quote the redacted command:\n%s", e)
	}
	written = append(written, filepath.Join(dir, "gate-run.jsonl"))
	// The store: `record` with the same root and the job running beside
	// it (its argv read live from /proc), every segment ungzipped and
	// grepped, and analyze of the store directory.
	store := filepath.Join(dir, "store")
	jobCmd := exec.Command(argv[0], argv[1:]...)
	if err := jobCmd.Start(); err != nil {
		t.Fatal(err)
	}
	code, o, e = runMemdiag(t, root, "record", "--store", store, "--segment", "10s", "--interval", "250ms", "--duration", "1s")
	_ = jobCmd.Wait()
	if code != 0 {
		t.Fatalf("record exit %d\nstderr: %s", code, e)
	}
	outputs["record"] = o + e
	segs, _ := filepath.Glob(filepath.Join(store, "*.jsonl.gz"))
	if len(segs) == 0 {
		t.Fatalf("record wrote no segment in %s", store)
	}
	var storeText strings.Builder
	for _, p := range segs {
		zf, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(zf)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(zr)
		zf.Close()
		storeText.Write(b)
	}
	outputs["store segments"] = storeText.String()
	if !strings.Contains(storeText.String(), "--header Private-Token:*** https://a.blob.core.windows.net/c?sig=***") {
		t.Errorf("the store's headers lack the unit's redacted command")
	}
	_, o, e = runMemdiag(t, root, "analyze", store, "--format", "json")
	outputs["analyze store"] = o + e

	// Every file memdiag wrote is the owner's alone (no --mode given).
	for _, p := range written {
		fi, err := os.Stat(p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", p, fi.Mode().Perm())
		}
	}

	secret := regexp.MustCompile(`[A-Z]+[a-z]SECRET|AKIA[0-9A-Z]{16}`)
	for name, text := range outputs {
		if text == "" {
			t.Errorf("%s: empty", name)
		}
		if m := secret.FindAllString(text, -1); len(m) > 0 {
			t.Errorf("%s leaks %v", name, m)
		}
	}
	if t.Failed() {
		for name, text := range outputs {
			if secret.MatchString(text) {
				fmt.Fprintf(os.Stderr, "--- %s ---\n%s\n", name, text)
			}
		}
	}
}

// TestAnalyzeRedactsRecordedSecrets: a recording made with --no-redact or
// by an older memdiag holds command lines as they were.
// correlate/testdata/real/busy-host-loop.jsonl.gz is one: it caught
// TestSecretsNeverLeave's job and gate's wrapped command with their
// planted secrets (ARGVaSECRET, --password=hunter2). analyze and compare
// must redact them in every format, to stdout and to -o files, unless
// --no-redact is given to them too.
//
// Issue 29.3's shapes are added to each of its command lines that holds
// ARGVaSECRET (a copy of the real recording, the rest as it was), so that
// every shape passes through analyze's and compare's outputs.
func TestAnalyzeRedactsRecordedSecrets(t *testing.T) {
	orig := filepath.Join("..", "correlate", "testdata", "real", "busy-host-loop.jsonl.gz")
	secret := regexp.MustCompile(`[A-Z]+[a-z]SECRET|hunter2|AKIA[0-9A-Z]{16}`)
	dir := t.TempDir()
	rec := filepath.Join(dir, "old.jsonl")
	{
		zf, err := os.Open(orig)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(zf)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(zr)
		zf.Close()
		if err != nil {
			t.Fatal(err)
		}
		shapes := "ARGVaSECRET https://ghp_OLDaSECRET@git.example.com/r.git Private-Token: OLDbSECRET https://a.blob.core.windows.net/c?sv=1&sig=OLDcSECRET" +
			" --jwt OLDdSECRET --bearer OLDeSECRET https://hooks.slack.com/services/T0A1B2C3D/B4E5F6G7H/OLDfSECRET AWS_ACCESS_KEY_ID=AKIA2OLDSECRET7XYZQ1"
		b = bytes.ReplaceAll(b, []byte("ARGVaSECRET"), []byte(shapes))
		if !bytes.Contains(b, []byte("OLDdSECRET")) {
			t.Fatal("the fixture no longer holds ARGVaSECRET")
		}
		if err := os.WriteFile(rec, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	outputs := map[string]string{}
	for _, f := range report.Formats {
		_, o, e := runMemdiag(t, "", "analyze", rec, "--format", string(f))
		outputs["analyze "+string(f)] = o + e
		file := filepath.Join(dir, "analyze."+string(f))
		_, _, e = runMemdiag(t, "", "analyze", rec, "--format", string(f), "-o", file)
		b, _ := os.ReadFile(file)
		outputs["analyze -o "+string(f)] = e + string(b)
		_, o, e = runMemdiag(t, "", "compare", rec, rec, "--format", string(f))
		outputs["compare "+string(f)] = o + e
	}
	for name, text := range outputs {
		if text == "" {
			t.Errorf("%s: empty", name)
		}
		if m := secret.FindAllString(text, -1); len(m) > 0 {
			t.Errorf("%s leaks %d secrets: %v", name, len(m), m[0])
		}
	}
	// The redacted places show "***", and --no-redact keeps them as
	// recorded, so the test fails if the fixture stops holding them.
	if o := outputs["analyze json"]; !strings.Contains(o, "--password ***") {
		t.Errorf("analyze json shows no redacted command line")
	}
	for _, shape := range []string{"https://***@git.example.com", "Private-Token: ***", "sig=***", "--jwt ***", "--bearer ***", "B4E5F6G7H/***", "AKIA***"} {
		if o := outputs["analyze json"]; !strings.Contains(o, shape) {
			t.Errorf("analyze json does not show %q", shape)
		}
	}
	_, o, e := runMemdiag(t, "", "analyze", rec, "--format", "json", "--no-redact")
	if !strings.Contains(o, "ARGVaSECRET") || !strings.Contains(o, "OLDdSECRET") {
		t.Errorf("analyze --no-redact lost the recorded command line:\n%s", e)
	}
}
