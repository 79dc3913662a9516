// Package archtest keeps the layers docs/architecture.md ("Layers") and
// CONTRIBUTING.md describe: it reads the imports of every package of the
// module (non-test files) and fails on an import that crosses a layer the
// wrong way.
package archtest

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/memdiag/memdiag/"

// imports maps each package of the module (its path below the module,
// "." for the root) to the module packages its non-test files import.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		for _, is := range f.Imports {
			p, _ := strconv.Unquote(is.Path.Value)
			if dep, ok := strings.CutPrefix(p, module); ok && !slices.Contains(out[rel], dep) {
				out[rel] = append(out[rel], dep)
			}
		}
		if _, ok := out[rel]; !ok {
			out[rel] = nil
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func isReport(p string) bool { return p == "report" || strings.HasPrefix(p, "report/") }

// TestLayers: no package imports cmd; the collectors import no recording,
// analysis or report package; the domain packages (correlate, gate,
// timers, memstate, confirm, record, signal) import no report package —
// they return data and the report layer writes the words; the report
// packages import no session, analysis, confirm or cmd. session's two
// imports of report words are the recorder's (docs/architecture.md).
func TestLayers(t *testing.T) {
	g := imports(t)
	if len(g) < 30 || g["cmd"] == nil {
		t.Fatalf("read %d packages; the walk missed the module", len(g))
	}
	collectors := []string{"psi", "lru", "swap", "diskio", "process", "procevents", "cgroupfs", "latency", "timers", "memstate", "signal", "units", "redact"}
	above := []string{"record", "sources", "session", "correlate", "analysis", "gate", "confirm", "exposition", "fleet", "store", "cmd"}
	domain := []string{"correlate", "gate", "timers", "memstate", "confirm", "record", "signal", "analysis", "sources", "store"}
	allowed := map[[2]string]string{
		{"session", "report/mem"}:        "the recorder writes the allocator reading the v1 recording keeps",
		{"session", "report/gatereport"}: "the progress line of --abort-on-fail",
	}
	for pkg, deps := range g {
		for _, dep := range deps {
			why := ""
			switch {
			case dep == "cmd" && pkg != ".":
				why = "nothing but main imports cmd"
			case slices.Contains(collectors, pkg) && (slices.Contains(above, dep) || isReport(dep)):
				why = "a collector imports a package above it"
			case slices.Contains(domain, pkg) && isReport(dep):
				why = "a domain package imports a report package: it should return data"
			case isReport(pkg) && slices.Contains([]string{"session", "analysis", "confirm", "cmd"}, dep):
				why = "a report package imports what runs it"
			case pkg == "session" && isReport(dep) && allowed[[2]string{pkg, dep}] == "":
				why = "session imports report words beyond the recorder's"
			}
			if why != "" {
				t.Errorf("%s imports %s: %s", pkg, dep, why)
			}
		}
	}
}

// TestLayersSeeAViolation: the walk sees a real import (session →
// record), so TestLayers can fail.
func TestLayersSeeAViolation(t *testing.T) {
	if !slices.Contains(imports(t)["session"], "record") {
		t.Fatal("session's import of record not seen")
	}
	if _, err := os.Stat("../../cmd"); err != nil {
		t.Fatal(err)
	}
}
