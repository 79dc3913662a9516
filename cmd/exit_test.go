package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestExitCodesAcrossCommands: the same fault gets the same exit code and
// the same wording from every command (see classify).
func TestExitCodesAcrossCommands(t *testing.T) {
	tmp := t.TempDir()
	empty := filepath.Join(tmp, "empty") // a root without proc/
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(tmp, "missing.jsonl")
	noFile := func(prefix string) string { return "memdiag: " + prefix + missing + ": no such file or directory\n" }
	usage := "\nRun 'memdiag --help' or 'memdiag <command> --help' for usage.\n"
	badFormat := func(formats string) string {
		return `memdiag: --format "xml": unknown format; want one of ` + formats + usage
	}
	const reports = "table, markdown, json, csv"
	noProc := "memdiag: " + empty + "/proc: unavailable: a proc file system (mount proc there, or give --root the root of a host's file tree: it must hold proc/, and sys/ for cgroups)\n"
	tests := []struct {
		fault  string
		args   []string
		code   int
		stderr string
	}{
		{"missing file", []string{"analyze", missing}, exitError, noFile("")},
		{"missing file", []string{"compare", missing, unionRec}, exitError, noFile("")},
		{"missing file", []string{"compare", unionRec, missing}, exitError, noFile("")},
		{"missing file", []string{"analyze", unionRec, "--latency", missing}, exitError, noFile("--latency ")},
		{"missing file", []string{"compare", unionRec, unionRec, "--latency-after", missing}, exitError, noFile("--latency ")},
		{"missing file", []string{"gate", "-t", "oom_kills==0", "--recording", missing}, exitError, noFile("--recording ")},
		{"missing file", []string{"gate", "-t", "oom_kills==0", "--recording", unionRec, "--thresholds", missing}, exitError, noFile("--thresholds ")},
		{"missing file", []string{"mem", "--root", missing}, exitError, noFile("--root ")},
		{"missing file", []string{"timers", "--root", missing}, exitError, noFile("--root ")},
		{"missing file", []string{"watch", "--root", missing, "--duration", "1s"}, exitError, noFile("--root ")},

		{"bad format", []string{"analyze", unionRec, "--format", "xml"}, exitUsage, badFormat(reports + ", html")},
		{"bad format", []string{"compare", unionRec, unionRec, "-f", "xml"}, exitUsage, badFormat(reports + ", html")},
		{"bad format", []string{"timers", "--format", "xml"}, exitUsage, badFormat(reports)},
		{"bad format", []string{"mem", "--format", "xml"}, exitUsage, badFormat(reports)},
		{"bad format", []string{"gate", "-t", "oom_kills==0", "--duration", "1s", "--format", "xml"}, exitUsage, badFormat("table, json, markdown, github")},

		{"unknown flag", []string{"analyze", unionRec, "--bogus"}, exitUsage, "memdiag: unknown flag: --bogus" + usage},
		{"unknown flag", []string{"compare", "--bogus"}, exitUsage, "memdiag: unknown flag: --bogus" + usage},
		{"unknown flag", []string{"timers", "--bogus"}, exitUsage, "memdiag: unknown flag: --bogus" + usage},
		{"unknown flag", []string{"mem", "--bogus"}, exitUsage, "memdiag: unknown flag: --bogus" + usage},
		{"unknown flag", []string{"gate", "--bogus"}, exitUsage, "memdiag: unknown flag: --bogus" + usage},
		{"unknown flag", []string{"watch", "--bogus"}, exitUsage, "memdiag: unknown flag: --bogus" + usage},
		{"unknown command", []string{"analyse"}, exitUsage, `memdiag: unknown command "analyse" for "memdiag"; did you mean "analyze"?` + usage},
		{"bad value", []string{"mem", "--interval", "banana"}, exitUsage, `memdiag: --interval "banana": want a duration such as 500ms, 10s, 5m or 2h` + usage},
		{"bad value", []string{"analyze", unionRec, "--gap", "-5s"}, exitUsage, `memdiag: --gap "-5s": want a duration of 0 or more` + usage},
		{"bad value", []string{"watch", "--interval", "-1s"}, exitUsage, `memdiag: --interval "-1s": want a duration of at least 10ms` + usage},
		{"bad value", []string{"watch", "--interval", "0"}, exitUsage, `memdiag: --interval "0s": want a duration of at least 10ms` + usage},
		{"bad value", []string{"record", "--interval", "5ms"}, exitUsage, `memdiag: --interval "5ms": want a duration of at least 10ms` + usage},
		{"bad value", []string{"gate", "--interval", "0", "--", "true"}, exitUsage, `memdiag: --interval "0s": want a duration of at least 10ms` + usage},
		{"missing flag", []string{"man"}, exitUsage, "memdiag: --dir: required: the directory to write the man pages into" + usage},
		{"unknown shell", []string{"completion", "tcsh"}, exitUsage, `memdiag: completion: unknown shell "tcsh"; want one of bash, fish, powershell, zsh` + usage},
		{"two stdins", []string{"compare", "-", "-"}, exitUsage, "memdiag: only one input can be - (stdin); got 2: [BEFORE AFTER]" + usage},

		{"environment", []string{"mem", "--root", empty}, exitEnv, noProc},
		{"environment", []string{"gate", "--out", "off", "--root", empty, "-t", "oom_kills==0", "--duration", "1s"}, exitEnv, noProc},
		{"environment", []string{"watch", "--root", empty, "--duration", "1s", "--out", filepath.Join(tmp, "w.jsonl")}, exitEnv, noProc},
		{"environment", []string{"watch", "--cgroup", tmp, "--duration", "1s", "--out", filepath.Join(tmp, "c.jsonl")}, exitEnv,
			"memdiag: --cgroup: " + tmp + ": unavailable: not a cgroup directory (give the cgroup's directory under /sys/fs/cgroup)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.fault+"/"+strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, errOut := runWith(t, time.Now, "/", tt.args...)
			if code != tt.code || errOut != tt.stderr {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d, stderr:\n%s", code, errOut, tt.code, tt.stderr)
			}
			if out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
		})
	}
}

// TestStdinInputs: "-" reads standard input wherever a file is read, with
// the same result as the file.
func TestStdinInputs(t *testing.T) {
	rec, err := os.ReadFile(unionRec)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"analyze", "%s", "--format", "json"},
		{"gate", "-t", "oom_kills==0", "--recording", "%s", "--format", "json"},
	} {
		run := func(input string, stdin []byte) (int, string, string) {
			a := make([]string, len(args))
			for i, s := range args {
				a[i] = strings.ReplaceAll(s, "%s", input)
			}
			ios, in, out, errOut := iostreamsTest()
			in.Write(stdin)
			f := &factory{IO: ios, Now: time.Now, Root: "/"}
			return runFactory(f, a), out.String(), errOut.String()
		}
		c1, o1, e1 := run(unionRec, nil)
		c2, o2, e2 := run("-", rec)
		if c1 != c2 || o1 != strings.ReplaceAll(o2, "stdin", unionRec) || o1 == "" {
			t.Errorf("%s: file: exit %d, %d bytes (%q); stdin: exit %d, %d bytes (%q)", args[0], c1, len(o1), e1, c2, len(o2), e2)
		}
	}
}
