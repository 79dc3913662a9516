package memstate

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A directory on a tmpfs that is not itself a mount (a fixture tree
// copied under /dev/shm) is not measured as a tmpfs mount; the mount is.
// Before, mem --root on a fixture under /dev/shm listed the fixture's
// sys/fs/cgroup as a tmpfs holding what /dev/shm held.
func TestStatfsOnlyMountPoints(t *testing.T) {
	if _, _, err := statfs("/dev/shm"); err != nil {
		t.Skipf("/dev/shm is not a tmpfs mount here: %v", err)
	}
	shm, err := os.MkdirTemp("/dev/shm", "memdiag-statfs-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(shm) })
	for _, p := range []string{shm, filepath.Join(shm, ".")} {
		if _, _, err := statfs(p); !errors.Is(err, errNotTmpfs) {
			t.Errorf("statfs(%s) = %v, want errNotTmpfs (a directory on /dev/shm, not a mount)", p, err)
		}
	}
}
