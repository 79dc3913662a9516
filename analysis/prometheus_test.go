package analysis

import (
	"testing"
	"time"
)

func TestPromWindow(t *testing.T) {
	now := time.Date(2026, 12, 1, 7, 0, 0, 0, time.UTC)
	f, to, err := PromWindow("", "", now)
	if err != nil || !to.Equal(now) || !f.Equal(now.Add(-time.Hour)) {
		t.Errorf("default window %s..%s, %v", f, to, err)
	}
	f, to, err = PromWindow("2026-12-01T06:20:00Z", "-30m", now)
	if err != nil || !f.Equal(now.Add(-40*time.Minute)) || !to.Equal(now.Add(-30*time.Minute)) {
		t.Errorf("window %s..%s, %v", f, to, err)
	}
	f, _, err = PromWindow("-2d", "now", now)
	if err != nil || !f.Equal(now.Add(-48*time.Hour)) {
		t.Errorf("-2d: %s, %v", f, err)
	}
}
