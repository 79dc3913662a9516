package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// SwapFile creates a swap file of size bytes named after name under
// /var/tmp, enables it, and disables and removes it when the test ends.
func SwapFile(t testing.TB, name string, size int64) string {
	t.Helper()
	RequireRoot(t, "swapon")
	Exclusive(t)
	path := filepath.Join("/var/tmp", "memdiag-test-"+name+".swap")
	_ = exec.Command("swapoff", path).Run() // a leftover from a killed run
	os.Remove(path)
	run := func(name string, args ...string) {
		t.Helper()
		if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
	}
	if out, err := exec.Command("fallocate", "-l", strconv.FormatInt(size, 10), path).CombinedOutput(); err != nil {
		// Some filesystems lack fallocate; dd works everywhere.
		t.Logf("fallocate: %v %s; using dd", err, out)
		run("dd", "if=/dev/zero", "of="+path, "bs=1M", "count="+strconv.FormatInt(size>>20, 10), "status=none")
	}
	run("chmod", "600", path)
	run("mkswap", "-q", path)
	if out, err := exec.Command("swapon", path).CombinedOutput(); err != nil {
		os.Remove(path)
		Unmet(t, "swapon "+path+" failed: "+string(out))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("swapoff", path).CombinedOutput(); err != nil {
			t.Errorf("swapoff %s: %v %s", path, err, out)
		}
		os.Remove(path)
	})
	return path
}
