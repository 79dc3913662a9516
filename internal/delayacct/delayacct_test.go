package delayacct

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func setup(t *testing.T, v string) Paths {
	t.Helper()
	root := t.TempDir()
	p := PathsFor(root, filepath.Join(root, "proc"))
	if err := os.MkdirAll(filepath.Dir(p.Sysctl), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.Sysctl, []byte(v+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func TestSetRestore(t *testing.T) {
	p := setup(t, "0")
	restore, err := Set(p, true, time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, p.Sysctl); got != "1" {
		t.Errorf("switch = %q while recording, want 1", got)
	}
	if got := read(t, p.State); !strings.Contains(got, `"old":"0"`) || !strings.Contains(got, `"new":"1"`) {
		t.Errorf("state file = %s", got)
	}
	restore()
	restore() // a second call (a deferred one after an explicit one) changes nothing
	if got := read(t, p.Sysctl); got != "0" {
		t.Errorf("switch = %q after restore, want 0", got)
	}
	if _, err := os.Stat(p.State); !os.IsNotExist(err) {
		t.Errorf("state file still there after restore: %v", err)
	}
	if note := Leftover(p); note != "" {
		t.Errorf("Leftover after a clean run = %q", note)
	}
}

// A run killed while the switch was on leaves the state file; the next
// run says so and restores the old value.
func TestLeftover(t *testing.T) {
	p := setup(t, "0")
	if _, err := Set(p, true, time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	// The killed run: a PID that is not running (pid_max is at most 2^22).
	b := strings.Replace(read(t, p.State), `"pid":`+itoa(os.Getpid()), `"pid":99999999`, 1)
	if err := os.WriteFile(p.State, []byte(b), 0o600); err != nil {
		t.Fatal(err)
	}
	note := Leftover(p)
	if !strings.Contains(note, "was left at 1") || !strings.Contains(note, "pid 99999999") || !strings.Contains(note, "restored it to 0") {
		t.Errorf("note = %q", note)
	}
	if got := read(t, p.Sysctl); got != "0" {
		t.Errorf("switch = %q, want 0 restored", got)
	}
	if _, err := os.Stat(p.State); !os.IsNotExist(err) {
		t.Errorf("state file kept: %v", err)
	}

	// Changed since by someone else: left alone, nothing said.
	p2 := setup(t, "0")
	if err := os.MkdirAll(filepath.Dir(p2.State), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p2.State, []byte(`{"pid":99999999,"old":"1","new":"0"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p2.Sysctl, []byte("1"), 0o644); err != nil {
		t.Fatal(err)
	}
	if note := Leftover(p2); note != "" || read(t, p2.Sysctl) != "1" {
		t.Errorf("someone else's value: note %q, switch %s; want silence and 1 kept", note, read(t, p2.Sysctl))
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestStateFileSafe: the state file is written with outfile (0600, never
// through a link planted at its path, never into a FIFO) and read back
// the same way: a link there is neither written through nor followed.
func TestStateFileSafe(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	p := setup(t, "0")
	restore, err := Set(p, true, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(p.State)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode() != 0o600 {
		t.Errorf("state file mode %v, want -rw-------", fi.Mode())
	}
	restore()

	// A link planted at the state path, to a file root would not want
	// truncated: Set refuses before touching the switch.
	shadow := filepath.Join(t.TempDir(), "shadow")
	const content = "root:$6$x:19000:0:99999:7:::\n"
	if err := os.WriteFile(shadow, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(shadow, p.State); err != nil {
		t.Fatal(err)
	}
	if _, err := Set(p, true, time.Now()); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("Set with a link at the state path: %v, want a refusal", err)
	}
	if b, _ := os.ReadFile(shadow); string(b) != content {
		t.Errorf("the link's target was written: %q", b)
	}
	if got := read(t, p.Sysctl); got != "0" {
		t.Errorf("switch = %q after a refused Set, want 0 untouched", got)
	}
	// Leftover does not follow it either (a state file elsewhere, naming
	// a dead run, would make it write the switch).
	if err := os.WriteFile(shadow, []byte(`{"pid":999999999,"old":"1","new":"0"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if note := Leftover(p); note != "" || read(t, p.Sysctl) != "0" {
		t.Errorf("Leftover followed the link: %q, switch %s", note, read(t, p.Sysctl))
	}
	// A FIFO at the state path neither blocks Leftover nor Set.
	os.Remove(p.State)
	if err := syscall.Mkfifo(p.State, 0o600); err != nil {
		t.Fatal(err)
	}
	if note := Leftover(p); note != "" {
		t.Errorf("Leftover of a FIFO = %q", note)
	}
	if _, err := Set(p, true, time.Now()); err == nil {
		t.Error("Set wrote its state into a FIFO")
	}
}

// withStat writes <proc>/PID/stat as the kernel writes it (the real
// /proc/self/stat, its command made "(a b) c)" to check the parsing
// after the last ')') with starttime replaced by start.
func withStat(t *testing.T, p Paths, pid int, start string) {
	t.Helper()
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Skip("no /proc/self/stat")
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	f := strings.Fields(s[i+1:])
	f[19] = start
	line := itoa(pid) + " (a b) c) " + strings.Join(f, " ") + "\n"
	dir := filepath.Join(p.Proc, itoa(pid))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
}

func withBootID(t *testing.T, p Paths, id string) {
	t.Helper()
	path := filepath.Join(p.Proc, "sys/kernel/random/boot_id")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(id+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestStateNamesRunAndBoot: Set records its PID's start time and the
// boot ID (read from the proc root) in the state file.
func TestStateNamesRunAndBoot(t *testing.T) {
	p := setup(t, "0")
	withStat(t, p, os.Getpid(), "4242")
	withBootID(t, p, "b1")
	restore, err := Set(p, true, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer restore()
	if got := read(t, p.State); !strings.Contains(got, `"pid_start":"4242"`) || !strings.Contains(got, `"boot_id":"b1"`) {
		t.Errorf("state file = %s, want pid_start 4242 and boot_id b1", got)
	}
}

// TestLeftoverPIDReused: the run that set the switch was killed and its
// PID now belongs to another process (a live PID with another start
// time): the switch is restored. The same PID with the recorded start
// time is the run itself, still recording: left alone.
func TestLeftoverPIDReused(t *testing.T) {
	other := os.Getppid() // alive, not this process
	for _, c := range []struct {
		start, want string
	}{{"200", "0"}, {"100", "1"}} {
		p := setup(t, "1")
		withStat(t, p, other, c.start)
		withBootID(t, p, "b1")
		if err := os.MkdirAll(filepath.Dir(p.State), 0o755); err != nil {
			t.Fatal(err)
		}
		st := `{"pid":` + itoa(other) + `,"old":"0","new":"1","pid_start":"100","boot_id":"b1"}`
		if err := os.WriteFile(p.State, []byte(st), 0o600); err != nil {
			t.Fatal(err)
		}
		note := Leftover(p)
		if got := read(t, p.Sysctl); got != c.want {
			t.Errorf("PID %d now started at %s (recorded 100): switch %s, want %s; note %q", other, c.start, got, c.want, note)
		}
		if c.want == "0" && !strings.Contains(note, "restored it to 0") {
			t.Errorf("note = %q", note)
		}
		if c.want == "1" && note != "" {
			t.Errorf("a running recorder's switch: note %q, want silence", note)
		}
	}
}

// TestLeftoverOtherBoot: a state file of an earlier boot is dropped
// without touching the switch (the reboot reset it; a 1 now is not ours).
func TestLeftoverOtherBoot(t *testing.T) {
	p := setup(t, "1")
	withBootID(t, p, "b2")
	if err := os.MkdirAll(filepath.Dir(p.State), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.State, []byte(`{"pid":99999999,"old":"0","new":"1","boot_id":"b1"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if note := Leftover(p); note != "" || read(t, p.Sysctl) != "1" {
		t.Errorf("another boot's state: note %q, switch %s; want silence and 1 kept", note, read(t, p.Sysctl))
	}
	if _, err := os.Stat(p.State); !os.IsNotExist(err) {
		t.Errorf("another boot's state file kept: %v", err)
	}
}
