package chain

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/memdiag/memdiag/cgroupfs"
	"github.com/memdiag/memdiag/record"
)

// cgroupNames turns the kernfs ids the programs record into cgroup paths
// as /proc/PID/cgroup gives them ("/", "/system.slice/app.service").
//
// A cgroup's id (kernfs_node.id, what bpf_get_current_cgroup_id returns
// and css.cgroup->kn->id holds) is its directory's inode number on a
// 64-bit kernel: kernfs_ino() in include/linux/kernfs.h; the root's is 1.
// The ids are never reused, so an id that a fresh walk does not find
// belongs to a group removed since, and is remembered as such.
type cgroupNames struct {
	dir     string            // hierarchy mount, e.g. /sys/fs/cgroup/unified
	paths   map[uint64]string // id -> path
	gone    map[uint64]bool   // ids a fresh walk did not find
	scanned bool              // walked since the last reset (once per sample)
	walks   int               // how many walks (tests)
}

func newCgroupNames(dir string) *cgroupNames {
	return &cgroupNames{dir: dir, paths: map[uint64]string{}, gone: map[uint64]bool{}}
}

// reset allows one more walk; Fill calls it once per sample.
func (c *cgroupNames) reset() { c.scanned = false }

// path returns id's cgroup path: "" for id 0 (no cgroup), the path
// relative to the hierarchy's root when found, and "(gone ID)" for a
// group removed before it could be looked up. A miss walks the hierarchy
// again, at most once between resets.
func (c *cgroupNames) path(id uint64) string {
	if id == 0 {
		return ""
	}
	if p, ok := c.paths[id]; ok {
		return p
	}
	if !c.gone[id] && !c.scanned && c.dir != "" {
		c.scanned = true
		c.walk()
		if p, ok := c.paths[id]; ok {
			return p
		}
		c.gone[id] = true
	}
	return fmt.Sprintf("(gone %d)", id)
}

// walk maps every directory under the hierarchy's root by inode number.
// Groups that vanish during the walk are skipped.
func (c *cgroupNames) walk() {
	c.walks++
	paths := make(map[uint64]string, len(c.paths))
	_ = filepath.WalkDir(c.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p != c.dir {
				return nil
			}
			return fs.SkipDir
		}
		if !d.IsDir() {
			return nil
		}
		// A group removed while walking, or one the walk cannot name,
		// is left out: its id stays unresolved ("(gone ID)").
		var st *syscall.Stat_t
		if fi, ierr := d.Info(); ierr == nil {
			st, _ = fi.Sys().(*syscall.Stat_t)
		}
		if st != nil {
			// WalkDir's paths are c.dir joined with the group's path.
			paths[st.Ino] = "/" + strings.TrimLeft(filepath.ToSlash(strings.TrimPrefix(p, c.dir)), "/")
		}
		return nil
	})
	c.paths = paths
}

// hierarchies finds, under sysRoot, the cgroup v2 mount (unified on a
// hybrid host, fs/cgroup on a pure v2 one) and the mount whose groups
// memcg ids name (the v1 memory controller's on a hybrid host, v1 true,
// else the v2 one). "" when absent.
func hierarchies(sysRoot string) (v2, memcg string, v1 bool) {
	base := filepath.Join(sysRoot, "fs", "cgroup")
	if isFile(filepath.Join(base, "unified", "cgroup.procs")) {
		v2 = filepath.Join(base, "unified")
	} else if isFile(filepath.Join(base, "cgroup.controllers")) {
		v2 = base
	}
	if isFile(filepath.Join(base, "memory", "memory.limit_in_bytes")) {
		return v2, filepath.Join(base, "memory"), true
	}
	return v2, v2, false
}

func isFile(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// memcgLimits is record.Chain.Limits for adds: the memory limits of
// each add's memory cgroup and of its ancestors (cgroupfs.MemoryLimit:
// v1 memory.limit_in_bytes when v1, else v2 memory.max), under the
// memory hierarchy mounted at dir, each group read once and listed
// once, sorted by group. A walk up stops at the first file it cannot
// read. Rows with no group, a group removed before it was named
// ("(gone ID)") or the folded "(others)" row are skipped; so is every
// row when dir is "". nil when no group is limited.
func memcgLimits(dir string, v1 bool, adds []record.ChainAdd) []record.MemoryLimit {
	if dir == "" {
		return nil
	}
	read := map[string]bool{} // groups read, or being read up from
	var ls []record.MemoryLimit
	for _, a := range adds {
		g := a.Memcg
		if g == "" || !strings.HasPrefix(g, "/") {
			continue
		}
		for g = path.Clean(g); !read[g]; g = path.Dir(g) {
			read[g] = true
			v, limited, err := cgroupfs.MemoryLimit(filepath.Join(dir, filepath.FromSlash(g)), v1)
			if err != nil {
				break
			}
			if limited {
				ls = append(ls, record.MemoryLimit{Group: g, Bytes: v})
			}
			if g == "/" {
				break
			}
		}
	}
	slices.SortFunc(ls, func(a, b record.MemoryLimit) int { return strings.Compare(a.Group, b.Group) })
	return ls
}
