package iostreams

import "testing"

// TestColor: colour needs a terminal, and NO_COLOR set to anything but
// "" (https://no-color.org) or DisableColor (--no-color) turns it off.
func TestColor(t *testing.T) {
	for _, tt := range []struct {
		noColor string
		tty     bool
		disable bool
		want    bool
	}{
		{"", true, false, true},
		{"1", true, false, false},
		{"", false, false, false}, // piped
		{"", true, true, false},   // --no-color
	} {
		t.Setenv("NO_COLOR", tt.noColor)
		s := System()
		s.SetStdoutTTY(tt.tty)
		if tt.disable {
			s.DisableColor()
		}
		if got := s.ColorEnabled(); got != tt.want {
			t.Errorf("NO_COLOR=%q tty=%v --no-color=%v: ColorEnabled = %v, want %v", tt.noColor, tt.tty, tt.disable, got, tt.want)
		}
	}
}

// TestWidth: piped output has no width limit; a terminal has its width.
func TestWidth(t *testing.T) {
	s, _, _, _ := Test()
	if got := s.Width(); got != 0 {
		t.Errorf("piped Width = %d, want 0", got)
	}
	s.SetStdoutTTY(true)
	if got := s.Width(); got != 80 {
		t.Errorf("terminal of unknown size: Width = %d, want 80", got)
	}
	s.SetWidth(132)
	if got := s.Width(); got != 132 {
		t.Errorf("Width = %d after SetWidth(132)", got)
	}
}

func TestWrapLine(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"short line", "short line"},
		{"Period: episodes recur every 10m1s (±20.1s) from 12:05:07: 11 of 12 expected, 1 missed",
			"Period: episodes recur every 10m1s (±20.1s) from 12:05:07: 11 of 12 expected, 1\nmissed"},
		{"  - a bullet whose text is long enough to need a second line of its own, here it is",
			"  - a bullet whose text is long enough to need a second line of its own, here\n    it is"},
		{" a │ table │ line that is far too long for the terminal but is left alone by it", " a │ table │ line that is far too long for the terminal but is left alone by it"},
		{"19:26:26      0.0%     0.0%     0.3%      5671       2       0       0     256     0.0", "19:26:26      0.0%     0.0%     0.3%      5671       2       0       0     256     0.0"},
	} {
		if got := WrapLine(tt.in, 80); got != tt.want {
			t.Errorf("WrapLine(%q) =\n%s\nwant\n%s", tt.in, got, tt.want)
		}
	}
}
