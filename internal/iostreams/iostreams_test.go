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
