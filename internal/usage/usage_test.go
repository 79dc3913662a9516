package usage

import (
	"errors"
	"io/fs"
	"testing"
)

func TestFlag(t *testing.T) {
	err := Flag("--latency-tz", fs.ErrNotExist)
	var ue *Error
	if !errors.As(err, &ue) || err.Error() != "--latency-tz: file does not exist" || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Flag = %T %q; want a *usage.Error naming the flag, wrapping its cause", err, err)
	}
	if got := Errorf("--next %d: want at least 1", 0).Error(); got != "--next 0: want at least 1" {
		t.Errorf("Errorf = %q", got)
	}
}
