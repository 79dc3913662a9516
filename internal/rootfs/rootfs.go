// Package rootfs reads files under a root folder (`--root`: an image, a
// container's rootfs, or "/" for the live host) without ever leaving it.
//
// Every path is resolved inside the root: symbolic links, absolute ones
// included, and ".." are taken relative to the root, as chroot would
// (openat2(2) RESOLVE_IN_ROOT where the kernel has it, Linux ≥ 5.6; a
// checked walk of each component otherwise). Only regular files are read —
// a FIFO, socket or device (a link to /dev/zero) is refused, and files
// are opened O_NONBLOCK so that a FIFO cannot block the open — and a read
// stops at a size limit. Errors name the path and never quote the file.
package rootfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// DefaultLimit bounds one configuration file (a unit, drop-in, crontab,
// anacrontab, zone file): far above any real one (the largest Debian
// tzdata file is under 4 KiB, a crontab a few KiB).
const DefaultLimit = 4 << 20

var (
	// ErrNotRegular is wrapped when the path is a FIFO, socket, device or
	// folder.
	ErrNotRegular = errors.New("not a regular file")
	// ErrTooLarge is wrapped when a file is over the read limit.
	ErrTooLarge = errors.New("file too large")
)

// noOpenat2 is set once openat2 has failed with ENOSYS (kernel < 5.6) or
// EPERM (a seccomp filter that does not know it).
var noOpenat2 atomic.Bool

// Open opens rel (a path relative to root; a leading "/" is ignored) for
// reading, resolved inside root, and checks that it is a regular file.
func Open(root, rel string) (*os.File, error) {
	f, err := open(root, rel, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, &fs.PathError{Op: "stat", Path: display(root, rel), Err: err}
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: display(root, rel), Err: fmt.Errorf("%w (%s); refusing to read it", ErrNotRegular, kind(fi.Mode()))}
	}
	return f, nil
}

// ReadFile reads the regular file rel under root, at most limit bytes
// (DefaultLimit when limit ≤ 0); a larger file is an ErrTooLarge error.
// It stops early when ctx is done.
func ReadFile(ctx context.Context, root, rel string, limit int64) ([]byte, error) {
	if limit <= 0 {
		limit = DefaultLimit
	}
	f, err := Open(root, rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []byte
	buf := make([]byte, 64<<10)
	for {
		if err := ctx.Err(); err != nil {
			return nil, &fs.PathError{Op: "read", Path: display(root, rel), Err: err}
		}
		n, err := f.Read(buf)
		out = append(out, buf[:n]...)
		if int64(len(out)) > limit {
			return nil, &fs.PathError{Op: "read", Path: display(root, rel), Err: fmt.Errorf("%w: over %d bytes", ErrTooLarge, limit)}
		}
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: display(root, rel), Err: err}
		}
	}
}

// ReadDir lists the folder rel under root, resolved inside root.
func ReadDir(root, rel string) ([]fs.DirEntry, error) {
	f, err := open(root, rel, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	des, err := f.ReadDir(-1)
	if err != nil {
		return nil, &fs.PathError{Op: "readdir", Path: display(root, rel), Err: err}
	}
	return des, nil
}

// open opens rel under root with flags, resolved inside root.
func open(root, rel string, flags int) (*os.File, error) {
	rel = strings.TrimLeft(filepath.ToSlash(rel), "/")
	if rel == "" {
		rel = "."
	}
	flags |= unix.O_CLOEXEC
	if !noOpenat2.Load() {
		dfd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: root, Err: err}
		}
		fd, err := unix.Openat2(dfd, rel, &unix.OpenHow{
			Flags:   uint64(flags),
			Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS,
		})
		unix.Close(dfd)
		switch {
		case err == nil:
			return os.NewFile(uintptr(fd), display(root, rel)), nil
		case errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM):
			noOpenat2.Store(true)
		default:
			return nil, &fs.PathError{Op: "open", Path: display(root, rel), Err: err}
		}
	}
	// The checked walk: resolve each link inside root, then open the
	// result without following a link at its last component.
	res, err := Resolve(root, rel)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: display(root, rel), Err: err}
	}
	fd, err := unix.Open(filepath.Join(root, res), flags|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: display(root, rel), Err: err}
	}
	return os.NewFile(uintptr(fd), display(root, rel)), nil
}

// Resolve resolves the symbolic links of rel inside root, absolute link
// targets and ".." taken relative to root, and returns the resolved path
// relative to root. A missing component is an fs.ErrNotExist error.
// ".." is taken after the links before it are resolved, as the kernel
// does ("link/.." is the folder holding link's target), never lexically.
func Resolve(root, rel string) (string, error) {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	cur := ""
	for hops := 0; len(parts) > 0; {
		p := parts[0]
		parts = parts[1:]
		if p == "" || p == "." {
			continue
		}
		if p == ".." {
			if cur != "" {
				// As the kernel: ".." of a file is ENOTDIR.
				if fi, err := os.Stat(filepath.Join(root, cur)); err != nil {
					return "", err
				} else if !fi.IsDir() {
					return "", unix.ENOTDIR
				}
			}
			cur = path.Dir(cur)
			if cur == "." || cur == "/" {
				cur = ""
			}
			continue
		}
		next := path.Join(cur, p)
		fi, err := os.Lstat(filepath.Join(root, next))
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		hops++
		if hops > 40 {
			return "", unix.ELOOP
		}
		target, err := os.Readlink(filepath.Join(root, next))
		if err != nil {
			return "", err
		}
		if strings.HasPrefix(target, "/") {
			cur = ""
		}
		parts = append(strings.Split(target, "/"), parts...)
	}
	return cur, nil
}

// display is the path errors show: the root-relative path under root.
func display(root, rel string) string {
	return filepath.Join(root, strings.TrimLeft(rel, "/"))
}

func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m.IsDir():
		return "a folder"
	}
	return m.Type().String()
}
