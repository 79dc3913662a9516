package testutil

import (
	"bytes"
	"strings"
	"testing"
)

func TestHead(t *testing.T) {
	lines := strings.Repeat("MemTotal:       16384000 kB\n", 20) // 28 bytes a line
	for _, tt := range []struct {
		name    string
		in      string
		fuzzing bool
		want    string
	}{
		{"not fuzzing: whole", lines, false, lines},
		{"fuzzing: whole lines within MaxSeed", lines, true, lines[:28*(MaxSeed/28)]},
		{"fuzzing: small file whole", "a\nb\n", true, "a\nb\n"},
		{"fuzzing: one long line cut", strings.Repeat("x", 1000), true, strings.Repeat("x", MaxSeed)},
	} {
		if got := head([]byte(tt.in), tt.fuzzing); !bytes.Equal(got, []byte(tt.want)) {
			t.Errorf("%s: %d bytes, want %d", tt.name, len(got), len(tt.want))
		}
	}
	if Fuzzing() {
		t.Error("Fuzzing() under plain go test")
	}
}
