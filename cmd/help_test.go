package cmd

import (
	"strings"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/iostreams"
)

// TestExamplesShape: every command's Example block is laid out the same
// way: two-space indent, each example a "# …" comment line followed by
// its memdiag command line, examples separated by one blank line, no
// trailing blanks.
func TestExamplesShape(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	root := newRootCmd(&factory{IO: ios, Now: time.Now, Root: "/"})
	for _, c := range root.Commands() {
		switch c.Name() {
		case "version", "help", "completion": // nothing to show by example
			continue
		}
		t.Run(c.Name(), func(t *testing.T) {
			if c.Example == "" {
				t.Fatal("no Example")
			}
			for i, block := range strings.Split(c.Example, "\n\n") {
				lines := strings.Split(block, "\n")
				if !strings.HasPrefix(lines[0], "  # ") {
					t.Errorf("example %d does not open with a '  # ' comment line: %q", i+1, lines[0])
				}
				cmds := 0
				for _, l := range lines {
					indented := strings.HasPrefix(l, "  ") && (len(l) > 2 && l[2] != ' ' || strings.HasPrefix(l, "    --"))
					if !indented || l != strings.TrimRight(l, " \t") {
						t.Errorf("example %d: line %q is not indented by exactly two spaces (four for a continuation) or has trailing blanks", i+1, l)
					}
					if strings.HasPrefix(l, "  memdiag "+c.Name()) {
						cmds++
					}
				}
				if cmds != 1 {
					t.Errorf("example %d has %d 'memdiag %s' lines, want 1:\n%s", i+1, cmds, c.Name(), block)
				}
			}
		})
	}
}
