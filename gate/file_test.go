package gate

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadFile(t *testing.T) {
	tests := []struct {
		name, content string
		want          []string // expressions, or
		err           string   // the error, with file:line
	}{
		{name: "list.yaml", content: "thresholds:\n  - memory.full.stall<1%\n  - 'swap.out<64MiB'\n  - oom_kills==0\n",
			want: []string{"memory.full.stall<1%", "swap.out<64MiB", "oom_kills==0"}},
		{name: "bare.yaml", content: "# CI gate\n- memory.some.avg10<10\n- refault.file.rate<500/s\n",
			want: []string{"memory.some.avg10<10", "refault.file.rate<500/s"}},
		{name: "t.json", content: `{"thresholds": ["memory.full.stall<1%", "io.some.stall<10%"]}`,
			want: []string{"memory.full.stall<1%", "io.some.stall<10%"}},
		{name: "list.json", content: `["oom_kills==0"]`, want: []string{"oom_kills==0"}},
		{name: "bad.yaml", content: "thresholds:\n  - memory.full.stall<1%\n  - swap.out<64Mb\n",
			err: `bad.yaml:3: invalid threshold "swap.out<64Mb": unit "Mb" is not valid for swap.out; use one of B KiB MiB GiB kB MB GB`},
		{name: "key.yaml", content: "threshold:\n  - memory.full.stall<1%\n",
			err: `key.yaml:1: invalid threshold: unknown key "threshold"; the file holds a "thresholds" list`},
		{name: "map.yaml", content: "thresholds:\n  memory.full.stall: 1%\n",
			err: `map.yaml:2: invalid threshold: want a list of expressions such as - memory.full.stall<1%`},
		{name: "nested.yaml", content: "- [memory.full.stall<1%]\n",
			err: `nested.yaml:1: invalid threshold: want an expression string, e.g. "memory.full.stall<1%"`},
		{name: "empty.yaml", content: "\n", err: `empty.yaml: invalid threshold: the file is empty; list thresholds under "thresholds:"`},
		{name: "none.yaml", content: "thresholds: []\n", err: `none.yaml: invalid threshold: no thresholds in the list`},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, tt.name)
			if err := os.WriteFile(p, []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			ths, err := Read(f, p)
			if tt.err != "" {
				if err == nil {
					t.Fatalf("Read succeeded; want %q", tt.err)
				}
				if !errors.Is(err, ErrThreshold) {
					t.Errorf("error does not wrap ErrThreshold: %v", err)
				}
				if diff := cmp.Diff(filepath.Join(dir, tt.err), err.Error()); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, th := range ths {
				got = append(got, th.Expr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("thresholds (-want +got):\n%s", diff)
			}
		})
	}
}
