package warnlog

import (
	"bytes"
	"errors"
	"log/slog"
	"testing"
)

// TestWarnHandler: what packages log reads like every other memdiag
// message on stderr.
func TestWarnHandler(t *testing.T) {
	var b bytes.Buffer
	l := slog.New(New(&b, slog.LevelInfo))
	l.Warn("probe: connection refused; further failures are recorded in the samples only")
	l.With("collector", "psi").Error("read failed", "err", errors.New("EIO"))
	l.Debug("not shown at Info")
	want := "memdiag: warning: probe: connection refused; further failures are recorded in the samples only\n" +
		"memdiag: error: read failed (collector: psi, err: EIO)\n"
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}
