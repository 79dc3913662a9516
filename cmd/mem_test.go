package cmd

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/memdiag/memdiag/internal/format"
	"github.com/memdiag/memdiag/internal/iostreams"
	"github.com/memdiag/memdiag/memstate"
)

func TestNewMemCmd(t *testing.T) {
	tests := []struct {
		args    string
		want    memOptions
		wantErr string
	}{
		{"", memOptions{Format: format.Table, Root: "/", CollectOptions: memstate.CollectOptions{Top: 10, Interval: time.Second}}, ""},
		{"--format json --top 3 --interval 0", memOptions{Format: format.JSON, Root: "/", CollectOptions: memstate.CollectOptions{Top: 3, Interval: 0}}, ""},
		// A copied tree does not change: no interval unless asked for.
		{"--root testdata --format markdown --top 0", memOptions{Format: format.Markdown, Root: "testdata", CollectOptions: memstate.CollectOptions{Top: 0, Interval: 0}}, ""},
		{"--root testdata --interval 2s", memOptions{Format: format.Table, Root: "testdata", CollectOptions: memstate.CollectOptions{Top: 10, Interval: 2 * time.Second}}, ""},
		{"--format JSON", memOptions{Format: format.JSON, Root: "/", CollectOptions: memstate.CollectOptions{Top: 10, Interval: time.Second}}, ""},
		{"--format csv", memOptions{Format: format.CSV, Root: "/", CollectOptions: memstate.CollectOptions{Top: 10, Interval: time.Second}}, ""},
		{"--format xml", memOptions{}, `--format "xml": unknown format; want one of table, markdown, json, csv`},
		{"--top -1", memOptions{}, "--top must be 0"},
		{"extra", memOptions{}, `mem takes no arguments, got "extra"`},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			ios, _, _, _ := iostreams.Test()
			f := &factory{IO: ios, Now: time.Now, Root: "/"}
			var got *memOptions
			args := []string{"mem"}
			if tt.args != "" {
				args = append(args, strings.Fields(tt.args)...)
			}
			err := execInRoot(f, newMemCmd(f, func(o *memOptions) error { got = o; return nil }), args...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			opt := cmpopts.IgnoreFields(memOptions{}, "IO", "CollectOptions.Now", "CollectOptions.RunLog", "ctx")
			if d := cmp.Diff(tt.want, *got, opt); d != "" {
				t.Errorf("options (-want +got):\n%s", d)
			}
		})
	}
}

func TestRunMemGolden(t *testing.T) {
	for _, f := range []format.Format{format.Table, format.Markdown, format.JSON, format.CSV} {
		t.Run(string(f), func(t *testing.T) {
			ios, _, out, _ := iostreams.Test()
			opts := &memOptions{
				IO:     ios,
				Root:   "../memstate/testdata/host618",
				Format: f,
				CollectOptions: memstate.CollectOptions{
					Now: func() time.Time { return time.Date(2026, 11, 29, 21, 44, 0, 0, time.UTC) }, Top: 10, Interval: 0,
					RunLog: func(context.Context, string, ...string) ([]byte, error) {
						return nil, errors.New("must not run with a fixture root")
					},
				},
			}
			if err := runMem(opts); err != nil {
				t.Fatal(err)
			}
			ext := map[format.Format]string{format.Table: "txt", format.Markdown: "md", format.JSON: "json", format.CSV: "csv"}[f]
			golden(t, "mem-host618."+ext, out.String())
		})
	}
}

func TestRunMemNoKernelLog(t *testing.T) {
	// A root without dev/kmsg: the report says the log was unreadable and
	// still shows the vmstat and cgroup counters.
	root := t.TempDir()
	src := "../memstate/testdata/host618"
	if err := os.CopyFS(root, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "dev/kmsg")); err != nil {
		t.Fatal(err)
	}
	ios, _, out, _ := iostreams.Test()
	opts := &memOptions{IO: ios, Root: root, Format: format.Table, CollectOptions: memstate.CollectOptions{Now: time.Now, Top: 10}}
	if err := runMem(opts); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"Kernel log not readable (open " + root + "/dev/kmsg: no such file or directory)", "Counters since boot: /proc/vmstat oom_kill 1."} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
}

func TestRunMemKernelLogFile(t *testing.T) {
	// A pasted `dmesg -T` of another boot: the kill times are the log's own
	// (21:40:02 on the machine that printed them, read in the local zone), not boot time
	// of --root plus a stamp; the report's cause and tasks come through.
	ios, _, out, _ := iostreams.Test()
	opts := &memOptions{IO: ios, Root: "../memstate/testdata/host618", Format: format.JSON,
		CollectOptions: memstate.CollectOptions{Now: time.Now, Top: 1, KernelLog: "../memstate/testdata/oom/host618-shmem-oom.dmesg-T.txt"}}
	if err := runMem(opts); err != nil {
		t.Fatal(err)
	}
	var r memstate.Report
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	if r.OOM.LogSource != opts.KernelLog || len(r.OOM.Kills) != 2 {
		t.Fatalf("oom %+v", r.OOM)
	}
	k := r.OOM.Kills[0]
	if !k.TimeFromLog || !k.Time.Equal(time.Date(2026, 12, 1, 21, 40, 2, 0, time.Local)) || k.OOMCgroup != "/memdiag-mem-shmoom" ||
		len(k.Tasks) != 3 || !strings.HasPrefix(k.Cause, "shmem-filled /memdiag-mem-shmoom: 52.4 MiB of 64.0 MiB shmem") {
		t.Errorf("kill %+v", k)
	}
	// A pasted plain `dmesg` of another host (5.4, a public thread): its
	// stamp is time since that host's boot, so the kill has no wall
	// time (not this host's boot time plus the stamp), and this host's
	// counters are not compared with the file's kills.
	opts.KernelLog, opts.Root = "../memstate/testdata/oom/public/reportportal-203-5.4-dmesg.txt", "../memstate/testdata/host618"
	out.Reset()
	if err := runMem(opts); err != nil {
		t.Fatal(err)
	}
	r = memstate.Report{}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.OOM.Kills) != 1 || !r.OOM.LogFile || !r.OOM.Kills[0].Time.IsZero() || r.OOM.Kills[0].SinceBoot != 7063247407*time.Microsecond ||
		!strings.Contains(r.Verdict.Sentence, "uwsgi (PID 63214) (its cgroup is not in the log) at 1h57m43s after boot.") {
		t.Errorf("pasted dmesg: %+v\n%s", r.OOM, r.Verdict.Sentence)
	}
	out.Reset()
	opts.Format = format.Table
	if err := runMem(opts); err != nil {
		t.Fatal(err)
	}
	if txt := out.String(); strings.Contains(txt, "others' messages have left the log") || !strings.Contains(txt, "no wall time (dmesg -T and journalctl -k print it)") ||
		!strings.Contains(txt, "This host's counters since its boot (they do not count the file's kills): /proc/vmstat oom_kill") {
		t.Errorf("pasted dmesg, table:\n%s", txt)
	}
	opts.Format = format.JSON
	opts.KernelLog = filepath.Join(t.TempDir(), "none")
	out.Reset()
	opts.Format = format.Table
	if err := runMem(opts); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Kernel log not readable (open "+opts.KernelLog+": no such file or directory)") {
		t.Errorf("missing file not said:\n%s", out.String())
	}
}

// TestRunMemMeminfoUnknown: a root whose proc/meminfo is empty, missing,
// a directory or without MemTotal gives no figures at all (issue 29.6:
// an empty file printed every figure as 0 B and exited 0): mem exits
// with the environment code (5), names the file and says why, and prints
// no report.
func TestRunMemMeminfoUnknown(t *testing.T) {
	for name, plant := range map[string]func(p string) error{
		"empty":       func(p string) error { return os.WriteFile(p, nil, 0o644) },
		"missing":     func(p string) error { return nil },
		"directory":   func(p string) error { return os.Mkdir(p, 0o755) },
		"no MemTotal": func(p string) error { return os.WriteFile(p, []byte("Dirty: 4 kB\n"), 0o644) },
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			if err := os.CopyFS(root, os.DirFS("../memstate/testdata/host618")); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(root, "proc/meminfo")
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			if err := plant(p); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{"table", "json"} {
				code, out, errOut := runMemdiag(t, root, "mem", "--interval", "0", "--format", f)
				if code != exitEnv {
					t.Errorf("%s: exit %d, want %d (unavailable)\nstderr: %s", f, code, exitEnv, errOut)
				}
				if out != "" {
					t.Errorf("%s: a report was printed:\n%.400s", f, out)
				}
				for _, want := range []string{p, "unknown"} {
					if !strings.Contains(errOut, want) {
						t.Errorf("%s: stderr lacks %q: %s", f, want, errOut)
					}
				}
			}
		})
	}
}

// TestRunMemManyOOMKills: a kernel log with 40 real OOM kills (forty
// runs of `head -c 64M /dev/zero | tail` in a 16 MiB group) lists the
// newest 10, counts the 30 earlier by process, and gives the kernel's
// report of the newest 3 only; --all-oom lists and details all 40.
func TestRunMemManyOOMKills(t *testing.T) {
	log := gunzipTo(t, filepath.Join("..", "memstate", "testdata", "oom", "host618-40-memcg-oom.dmesg-T.txt.gz"))
	run := func(all bool) string {
		ios, _, out, _ := iostreams.Test()
		opts := &memOptions{IO: ios, Root: "../memstate/testdata/host618", Format: format.Table, AllOOM: all,
			CollectOptions: memstate.CollectOptions{Now: func() time.Time { return time.Date(2026, 12, 6, 11, 0, 0, 0, time.UTC) }, Top: 1, KernelLog: log}}
		if err := runMem(opts); err != nil {
			t.Fatal(err)
		}
		s := out.String()
		return s[strings.Index(s, "OOM KILLS\n"):]
	}
	rows := func(s string) int {
		return strings.Count(s, "│ memcg      │ /memdiag-polish-oom │ 16.0 MiB / 16.0 MiB")
	}
	details := func(s string) int { return strings.Count(s, "anon overrun in /memdiag-polish-oom") }
	short := run(false)
	if rows(short) != 10 || details(short) != 3 ||
		!strings.Contains(short, "From "+log+": 40 OOM kills in the kernel log.\nThe newest 10 below; 30 earlier since ") ||
		!strings.Contains(short, " not listed (tail 30; --all-oom lists them).\n") ||
		!strings.Contains(short, "What the kernel reported for the newest 3 (--all-oom: for each):") {
		t.Errorf("%d rows, %d details:\n%s", rows(short), details(short), short)
	}
	// The newest kill is the table's last row and the last detail.
	if i, j := strings.Index(short, "│ 12819 │ tail"), strings.Index(short, "tail (PID 12819): anon overrun"); i < 0 || j < i {
		t.Errorf("the newest kill (PID 12819) not listed and detailed:\n%s", short)
	}
	// dmesg -T gives no time since boot: "-", not "0s".
	if strings.Contains(short, "│ 0s ") {
		t.Errorf("SINCE BOOT 0s for a dmesg -T log:\n%s", short)
	}
	if n := strings.Count(short, "\n"); n > 45 {
		t.Errorf("%d lines for 40 kills", n)
	}
	all := run(true)
	if rows(all) != 40 || details(all) != 40 || strings.Contains(all, "not listed") || strings.Contains(all, "for the newest") {
		t.Errorf("--all-oom: %d rows, %d details", rows(all), details(all))
	}
	if time.Now().In(time.Local).Format("-0700") == "+0000" {
		// dmesg -T's times are read in the local zone: the golden is UTC's.
		golden(t, "mem-40-oom-kills.txt", strings.ReplaceAll(short, log, "<log>"))
	}
}

// gunzipTo writes the gzipped file gz, uncompressed, into a temporary
// directory and returns its path there (named as gz without ".gz").
func gunzipTo(t *testing.T, gz string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(gz), ".gz"))
	if err := os.WriteFile(p, gunzipFile(t, gz), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// gunzipFile is the uncompressed content of the gzipped file gz.
func gunzipFile(t *testing.T, gz string) []byte {
	t.Helper()
	f, err := os.Open(gz)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
