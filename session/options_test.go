package session

import (
	"errors"
	"testing"
	"time"
)

// TestCheckModes: the words --events and --ebpf take, and the bounds of
// --stall-window, each refused as a usage error naming the flag.
func TestCheckModes(t *testing.T) {
	ok := Options{Events: "auto", EBPF: "off", StallThreshold: 100 * time.Millisecond, StallWindow: time.Second}
	if err := ok.CheckModes(); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		mod  func(*Options)
		want string
	}{
		{func(o *Options) { o.Events = "yes" }, `--events "yes": want auto, on or off`},
		{func(o *Options) { o.EBPF = "" }, `--ebpf "": want auto, on or off`},
		{func(o *Options) { o.StallWindow = 100 * time.Millisecond }, "--stall-window must be 500ms..10s and at least --stall-threshold"},
		{func(o *Options) { o.StallThreshold = 2 * time.Second }, "--stall-window must be 500ms..10s and at least --stall-threshold"},
	} {
		o := ok
		tt.mod(&o)
		err := o.CheckModes()
		if ue := (*UsageError)(nil); !errors.As(err, &ue) || err.Error() != tt.want {
			t.Errorf("CheckModes() = %v, want the usage error %q", err, tt.want)
		}
	}
	off := ok
	off.StallThreshold, off.StallWindow = 0, 0
	if err := off.CheckModes(); err != nil {
		t.Errorf("no stall threshold: %v", err)
	}
}
