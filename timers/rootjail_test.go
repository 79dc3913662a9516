package timers

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConditionsStayInRoot checks each Condition*= kind on a path that
// climbs out of the root ("/../../host-file") or runs through a link to
// the host: every one is answered for the root's own files, never the
// host's. Before the jail, ConditionPathExists=/../../host-file was true
// for a file beside the root (an existence oracle on the host).
func TestConditionsStayInRoot(t *testing.T) {
	top := t.TempDir()
	root := filepath.Join(top, "a", "img") // root/../../host-file is top/host-file
	host := filepath.Join(top, "hostdir")
	for _, d := range []string{filepath.Join(root, "etc"), host} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(top, "host-file"), []byte("x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(host, "f"), []byte("x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(host, filepath.Join(root, "etc/linked")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "etc/own"), []byte("x"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key, value string
		want       bool
	}{
		{"ConditionPathExists", "/../../host-file", false},
		{"ConditionPathExists", "/etc/linked/f", false},
		{"ConditionPathExists", "/../../etc/own", true}, // ".." stops at the root
		{"ConditionPathExistsGlob", "/../../host-fil*", false},
		{"ConditionPathExistsGlob", "/etc/linked/*", false},
		{"ConditionPathExistsGlob", "/etc/ow*", true},
		{"ConditionPathIsDirectory", "/../../hostdir", false},
		{"ConditionPathIsDirectory", "/etc/linked", false},
		{"ConditionPathIsSymbolicLink", "/../etc/linked", true},
		{"ConditionDirectoryNotEmpty", "/etc/linked", false},
		{"ConditionDirectoryNotEmpty", "/../..", true}, // the root itself
		{"ConditionFileNotEmpty", "/../../host-file", false},
		{"ConditionFileIsExecutable", "/etc/linked/f", false},
		{"ConditionFileIsExecutable", "/../etc/own", true},
	} {
		t.Run(tc.key+"="+tc.value, func(t *testing.T) {
			got, ok := conditionResult(root, tc.key, tc.value)
			if !ok || got != tc.want {
				t.Errorf("conditionResult(%s=%s) = %v, %v; want %v, true", tc.key, tc.value, got, ok, tc.want)
			}
		})
	}
}

// TestListingStaysInRoot links the root's etc/systemd/system to a host
// folder holding a timer: the inventory lists the root's timers only.
// Before the jail os.ReadDir followed the link and listed host.timer.
func TestListingStaysInRoot(t *testing.T) {
	top := t.TempDir()
	root := filepath.Join(top, "img")
	host := filepath.Join(top, "host-units")
	for _, d := range []string{filepath.Join(root, "etc/systemd"), filepath.Join(root, "lib/systemd/system"), host} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for p, text := range map[string]string{
		filepath.Join(host, "host.timer"):                     "[Timer]\nOnCalendar=daily\n",
		filepath.Join(host, "host.service"):                   "[Service]\nExecStart=/bin/true\n",
		filepath.Join(root, "lib/systemd/system/own.timer"):   "[Timer]\nOnCalendar=daily\n",
		filepath.Join(root, "lib/systemd/system/own.service"): "[Service]\nExecStart=/bin/true\n",
	} {
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(host, filepath.Join(root, "etc/systemd/system")); err != nil {
		t.Fatal(err)
	}
	jobs, err := Inventory(root, InventoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, j := range jobs {
		names = append(names, j.Name)
	}
	if got := strings.Join(names, " "); got != "own.timer" {
		t.Errorf("jobs %q, want own.timer only", got)
	}
}
