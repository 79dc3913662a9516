// Package warnlog is the slog.Handler memdiag gives every package that
// logs: one line per record on stderr, worded like every other message
// memdiag prints there.
package warnlog

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
)

// Handler is the slog.Handler cmd gives every package that logs: a
// record is one line in the format of every other message memdiag prints
// on stderr, "memdiag: warning: MSG (key: value, ...)", with "error" for
// slog's Error level and "debug"/"note" for Debug and Info, so that a
// collector's failure does not read differently from a command's warning.
type Handler struct {
	mu    *sync.Mutex
	w     io.Writer
	level slog.Level
	attrs []slog.Attr
}

// New is a Handler that writes the records of level and above to w.
func New(w io.Writer, level slog.Level) *Handler {
	return &Handler{mu: &sync.Mutex{}, w: w, level: level}
}

// Enabled reports whether l is at least the level.
func (h *Handler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

// Handle writes r as one line.
func (h *Handler) Handle(_ context.Context, r slog.Record) error {
	kind := "warning"
	switch {
	case r.Level >= slog.LevelError:
		kind = "error"
	case r.Level < slog.LevelInfo:
		kind = "debug"
	case r.Level < slog.LevelWarn:
		kind = "note"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "memdiag: %s: %s", kind, r.Message)
	var kv []string
	add := func(a slog.Attr) bool {
		if !a.Equal(slog.Attr{}) {
			kv = append(kv, a.Key+": "+a.Value.Resolve().String())
		}
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	if len(kv) > 0 {
		b.WriteString(" (" + strings.Join(kv, ", ") + ")")
	}
	b.WriteByte('\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, b.String())
	return err
}

// WithAttrs adds attributes to every line.
func (h *Handler) WithAttrs(as []slog.Attr) slog.Handler {
	n := *h
	n.attrs = append(append([]slog.Attr{}, h.attrs...), as...)
	return &n
}

// WithGroup is not used by memdiag; groups are flattened.
func (h *Handler) WithGroup(string) slog.Handler { return h }
