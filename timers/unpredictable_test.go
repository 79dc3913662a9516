package timers

import (
	"testing"
	"time"
)

func TestUnpredictable(t *testing.T) {
	for _, tc := range []struct {
		delay, period time.Duration
		want          bool
	}{
		{12 * time.Hour, 12 * time.Hour, true},
		{6 * time.Hour, 12 * time.Hour, true},
		{time.Hour, 24 * time.Hour, false},
		{0, time.Hour, false},
		{time.Hour, 0, false}, // irregular, no period known
	} {
		if got := Unpredictable(tc.delay, tc.period); got != tc.want {
			t.Errorf("Unpredictable(%s, %s) = %v, want %v", tc.delay, tc.period, got, tc.want)
		}
	}
}
