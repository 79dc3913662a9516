package redact

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// plantedSecret matches the secrets tests plant on purpose
// (cmd.TestSecretsNeverLeave's ARGVaSECRET, gate's --password=hunter2);
// some real recordings in testdata caught those test processes running.
var plantedSecret = regexp.MustCompile(`[A-Z]+[a-z]SECRET|hunter2`)

// TestCorpusCommandLinesKept runs every command line of every recording
// in the repository's testdata (process command lines, events, the
// wrapped command, job commands, --probe URLs: 4,585 distinct lines from
// real hosts at the time of writing) through [String]. Ordinary command
// lines must come out as they went in: a rule that redacts one of them is
// a false positive. Lines holding a planted secret must lose it.
func TestCorpusCommandLinesKept(t *testing.T) {
	lines := corpusCommandLines(t)
	if len(lines) < 1000 {
		t.Fatalf("only %d command lines in the corpus; the walk is broken", len(lines))
	}
	for s, file := range lines {
		got := String(s)
		if plantedSecret.MatchString(s) {
			if m := plantedSecret.FindString(got); m != "" {
				t.Errorf("%s: %q keeps the planted %q", file, got, m)
			}
			continue
		}
		if got != s {
			t.Errorf("%s: false positive\n  in  %q\n  out %q", file, s, got)
		}
	}
}

// corpusCommandLines returns each distinct command-like string of the
// recordings under ../ (every *.jsonl and *.jsonl.gz), with a file it came
// from.
func corpusCommandLines(t *testing.T) map[string]string {
	t.Helper()
	lines := map[string]string{}
	err := filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.IsDir() || !(strings.HasSuffix(p, ".jsonl") || strings.HasSuffix(p, ".jsonl.gz")) {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		var r io.Reader = f
		if strings.HasSuffix(p, ".gz") {
			zr, err := gzip.NewReader(f)
			if err != nil {
				return nil // a deliberately broken fixture
			}
			r = zr
		}
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			var v any
			if json.Unmarshal(sc.Bytes(), &v) != nil {
				continue
			}
			walkCommands(v, func(s string) {
				if _, ok := lines[s]; !ok {
					lines[s] = p
				}
			})
		}
		return nil // a truncated fixture ends the scan; what was read counts
	})
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// walkCommands calls fn with every string under a key that holds a
// command line, a command or a URL ("cmdline", "parent_cmdline",
// "command", "probe").
func walkCommands(v any, fn func(string)) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			switch e := e.(type) {
			case string:
				if strings.Contains(k, "cmdline") || k == "command" || k == "probe" {
					fn(e)
				}
			case []any:
				if k == "command" {
					for _, a := range e {
						if s, ok := a.(string); ok {
							fn(s)
						}
					}
				}
			}
			walkCommands(e, fn)
		}
	case []any:
		for _, e := range x {
			walkCommands(e, fn)
		}
	}
}
