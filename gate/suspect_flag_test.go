package gate

import "testing"

// TestSuspectActionFlag: --suspect-psi takes the three actions, shows
// warn when unset and refuses anything else.
func TestSuspectActionFlag(t *testing.T) {
	var a SuspectAction
	if a.Type() != "warn|fail|ignore" || (&a).String() != "warn" {
		t.Errorf("unset: Type %q, String %q", a.Type(), (&a).String())
	}
	for _, s := range []string{"fail", "ignore", "warn"} {
		if err := a.Set(s); err != nil || string(a) != s || a.String() != s {
			t.Errorf("Set(%q): %v, now %q", s, err, a)
		}
	}
	if err := a.Set("Fail"); err == nil || err.Error() != `want warn, fail or ignore, not "Fail"` || a != SuspectWarn {
		t.Errorf("Set(Fail) = %v, now %q", err, a)
	}
}
