package lru

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzParseKV checks cgroup memory.stat / memory.events style files.
func FuzzParseKV(f *testing.F) {
	f.Add([]byte("anon 1024\nfile 2048\n"))
	f.Add([]byte("low 0\nhigh 3\nmax 18446744073709551615\noom 1\noom_kill 1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := ParseKV(bytes.NewReader(b), "memory.stat"); err != nil && !strings.HasPrefix(err.Error(), "memory.stat") {
			t.Fatalf("error does not name the file: %v", err)
		}
	})
}
