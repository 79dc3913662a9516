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
	"syscall"
	"time"

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
	f, fi, err := openRead(root, rel)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		e := fmt.Errorf("%w (%s); refusing to read it", ErrNotRegular, kind(fi.Mode()))
		if fi.IsDir() {
			e = fmt.Errorf("%w (%s): %w", ErrNotRegular, kind(fi.Mode()), unix.EISDIR)
		}
		return nil, &fs.PathError{Op: "open", Path: display(root, rel), Err: e}
	}
	return f, nil
}

// openRead opens rel under root for reading, resolved inside root and
// non-blocking, and returns its file information; the caller checks its
// type.
func openRead(root, rel string) (*os.File, fs.FileInfo, error) {
	f, err := open(root, rel, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, &fs.PathError{Op: "stat", Path: display(root, rel), Err: err}
	}
	return f, fi, nil
}

// OpenDevice opens rel under root as [Open] does, but takes the one
// character device major:minor as well as a regular file: for
// <root>/dev/kmsg (1:11), which on a live host is that device and in a
// fixture a regular file. Any other device (a link to /dev/zero, 1:5), a
// FIFO or a socket is refused with ErrNotRegular.
func OpenDevice(root, rel string, major, minor uint32) (*os.File, error) {
	f, fi, err := openRead(root, rel)
	if err != nil {
		return nil, err
	}
	m := fi.Mode()
	if m.IsRegular() {
		return f, nil
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && m&fs.ModeCharDevice != 0 &&
		unix.Major(st.Rdev) == major && unix.Minor(st.Rdev) == minor {
		return f, nil
	}
	f.Close()
	return nil, &fs.PathError{Op: "open", Path: display(root, rel),
		Err: fmt.Errorf("%w (%s); want a regular file or the device %d:%d", ErrNotRegular, kind(m), major, minor)}
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

// OpenDir opens the folder rel under root, resolved inside root, for
// listing it and for *at(2) calls relative to it.
func OpenDir(root, rel string) (*os.File, error) {
	return open(root, rel, unix.O_RDONLY|unix.O_DIRECTORY)
}

// ReadDir lists the folder rel under root, resolved inside root.
func ReadDir(root, rel string) ([]fs.DirEntry, error) {
	f, err := OpenDir(root, rel)
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

// ProcLimit bounds one /proc or /sys file: far above any real one (a
// /proc/diskstats of a thousand devices is under 200 KiB, /proc/vmstat
// under 8 KiB); a file that keeps going (a link to /dev/zero, already
// refused as a device) cannot cost more.
const ProcLimit = 16 << 20

// ReadIn reads the file at p, which must lie below the folder jail (both
// as given: absolute, or relative to the working folder), resolved inside
// jail with [ReadFile]'s bounds: a regular file, opened O_NONBLOCK, at
// most limit bytes, stopped when ctx is done. Collectors pass their
// --root's proc or sys folder (or a cgroup folder) as jail.
func ReadIn(ctx context.Context, jail, p string, limit int64) ([]byte, error) {
	rel, err := below(jail, p)
	if err != nil {
		return nil, err
	}
	return ReadFile(ctx, jail, rel, limit)
}

// OpenIn opens the file at p below the folder jail as [Open] does.
func OpenIn(jail, p string) (*os.File, error) {
	rel, err := below(jail, p)
	if err != nil {
		return nil, err
	}
	return Open(jail, rel)
}

// Check vets a file before a library that opens paths itself (such as
// prometheus/procfs, which opens without O_NONBLOCK and follows links)
// reads it: rel under root must open inside root as a regular file, and
// the plain path filepath.Join(root, rel) must be that same file, so that
// a link leading out of root, a FIFO or a device is refused before the
// library can block on it or read the host. A file that does not exist
// is returned as the error of its open (fs.ErrNotExist), for the caller
// to treat as missing.
func Check(root, rel string) error {
	f, err := Open(root, rel)
	if errors.Is(err, fs.ErrNotExist) {
		// Missing inside the root but there outside it: a link out.
		if _, serr := os.Stat(filepath.Join(root, strings.TrimLeft(rel, "/"))); serr == nil {
			return &fs.PathError{Op: "open", Path: display(root, rel), Err: ErrOutside}
		}
	}
	if err != nil {
		return err
	}
	defer f.Close()
	in, err := f.Stat()
	if err != nil {
		return &fs.PathError{Op: "stat", Path: display(root, rel), Err: err}
	}
	out, err := os.Stat(filepath.Join(root, strings.TrimLeft(rel, "/")))
	if err != nil {
		return &fs.PathError{Op: "stat", Path: display(root, rel), Err: err}
	}
	if !os.SameFile(in, out) {
		return &fs.PathError{Op: "open", Path: display(root, rel), Err: ErrOutside}
	}
	return nil
}

// ErrOutside is wrapped when a path's links lead out of its root.
var ErrOutside = errors.New("a link leads out of the root; refusing to read it")

// below returns p relative to jail, or an error when p is not below it.
func below(jail, p string) (string, error) {
	rel, err := filepath.Rel(jail, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", &fs.PathError{Op: "open", Path: p, Err: fmt.Errorf("%w (%s)", ErrOutside, jail)}
	}
	return rel, nil
}

// ReadPath reads the file at p as [ReadIn] does, jailed in p's own folder:
// for a reader given only a file's path (a cgroup's memory.stat), whose
// folder was chosen from the root; a link at p cannot leave that folder.
func ReadPath(ctx context.Context, p string, limit int64) ([]byte, error) {
	return ReadFile(ctx, filepath.Dir(p), filepath.Base(p), limit)
}

// OpenPath opens the file at p as [Open] does, jailed in p's own folder.
func OpenPath(p string) (*os.File, error) {
	return Open(filepath.Dir(p), filepath.Base(p))
}

// Stat returns the file information of rel under root, its links
// resolved inside root (a link out of root leads to root's own file of
// that name, or to none).
func Stat(root, rel string) (fs.FileInfo, error) {
	f, err := open(root, rel, unix.O_PATH)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, &fs.PathError{Op: "stat", Path: display(root, rel), Err: err}
	}
	return fi, nil
}

// Lstat is [Stat] without following a link at rel's last component: the
// folders before it are resolved inside root.
func Lstat(root, rel string) (fs.FileInfo, error) {
	rel = strings.TrimLeft(filepath.ToSlash(rel), "/")
	dir, base := path.Split(rel)
	if base == "" || base == "." || base == ".." {
		return Stat(root, rel)
	}
	res, err := Resolve(root, dir)
	if err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: display(root, rel), Err: err}
	}
	fi, err := os.Lstat(filepath.Join(root, res, base))
	if err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: display(root, rel), Err: unwrapPath(err)}
	}
	return fi, nil
}

// Readlink returns the target of the symbolic link rel under root, the
// folders before its last component resolved inside root (a linked etc
// never makes it read the host's etc/localtime).
func Readlink(root, rel string) (string, error) {
	rel = strings.TrimLeft(filepath.ToSlash(rel), "/")
	dir, base := path.Split(rel)
	res, err := Resolve(root, dir)
	if err != nil {
		return "", &fs.PathError{Op: "readlink", Path: display(root, rel), Err: err}
	}
	t, err := os.Readlink(filepath.Join(root, res, base))
	if err != nil {
		return "", &fs.PathError{Op: "readlink", Path: display(root, rel), Err: unwrapPath(err)}
	}
	return t, nil
}

// Glob returns the paths (relative to root, without a leading "/") that
// match pattern (path.Match syntax per component) under root, each folder
// listed inside root ([ReadDir]), so a linked folder never lists the host.
func Glob(root, pattern string) ([]string, error) {
	parts := strings.Split(strings.TrimLeft(filepath.ToSlash(pattern), "/"), "/")
	cur := []string{""}
	for i, p := range parts {
		if p == "" || p == "." {
			continue
		}
		last := i == len(parts)-1
		var next []string
		for _, c := range cur {
			if p == ".." {
				// As the kernel: ".." of what c resolves to, kept in root.
				if n, err := Resolve(root, c+"/.."); err == nil {
					next = append(next, n)
				}
				continue
			}
			if !hasMeta(p) {
				n := path.Join(c, p)
				if _, err := Lstat(root, n); err == nil {
					next = append(next, n)
				}
				continue
			}
			if _, err := path.Match(p, ""); err != nil {
				return nil, err
			}
			des, err := ReadDir(root, c)
			if err != nil {
				continue
			}
			for _, de := range des {
				if ok, _ := path.Match(p, de.Name()); ok {
					next = append(next, path.Join(c, de.Name()))
				}
			}
		}
		cur = next
		if len(cur) == 0 || last {
			break
		}
	}
	if len(cur) == 1 && cur[0] == "" {
		return nil, nil
	}
	return cur, nil
}

func hasMeta(p string) bool { return strings.ContainsAny(p, `*?[\`) }

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Input bounds for files the user names on the command line.
const (
	// RecordingLimit bounds a recording (analyze, compare, gate
	// --recording): a week of 1 s samples is about 1.5 GiB uncompressed.
	RecordingLimit = 16 << 30
	// LatencyLimit bounds a load-test results file (--latency).
	LatencyLimit = 16 << 30
	// KernelLogLimit bounds mem --kernel-log, which is read whole.
	KernelLogLimit = 256 << 20
	// ThresholdsLimit bounds gate --thresholds.
	ThresholdsLimit = 1 << 20
)

// Input is a file the user named, opened by [OpenInput]: reads stop at
// its limit (ErrTooLarge) and once its context is done.
type Input struct {
	f     *os.File
	ctx   context.Context
	n     int64
	limit int64
	stop  func() bool
}

// OpenInput opens the file p the user named for reading: a regular file,
// or, when pipe is set, a FIFO or pipe (read while a writer holds it open;
// a FIFO without a writer reads as empty). A device (/dev/zero), socket or
// folder is refused with ErrNotRegular, a regular file over limit bytes
// with ErrTooLarge before it is read, and a pipe that goes past limit
// fails at that point. Reads return ctx's error once ctx is done; a read
// blocked on a pipe is woken by closing it.
func OpenInput(ctx context.Context, p string, limit int64, pipe bool) (*Input, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	m := fi.Mode()
	switch {
	case m.IsRegular():
		if fi.Size() > limit {
			f.Close()
			return nil, &fs.PathError{Op: "open", Path: p, Err: fmt.Errorf("%w: %d bytes, over the %s limit", ErrTooLarge, fi.Size(), sizeText(limit))}
		}
	case pipe && m&fs.ModeNamedPipe != 0:
		// The non-blocking open reads a FIFO without a writer as empty:
		// open it again, blocking until a writer comes or ctx is done.
		g, err := openFIFO(ctx, p)
		f.Close()
		if err != nil {
			return nil, err
		}
		f = g
	default:
		f.Close()
		what := "a regular file"
		if pipe {
			what += " or a pipe"
		}
		e := fmt.Errorf("%w (%s); want %s", ErrNotRegular, kind(m), what)
		if m.IsDir() {
			e = fmt.Errorf("%w (%s): %w", ErrNotRegular, kind(m), unix.EISDIR)
		}
		return nil, &fs.PathError{Op: "open", Path: p, Err: e}
	}
	in := &Input{f: f, ctx: ctx, limit: limit}
	in.stop = context.AfterFunc(ctx, func() { _ = f.SetReadDeadline(time.Now()) })
	return in, nil
}

// Read reads from the file, failing with ErrTooLarge past the limit and
// with the context's error once it is done.
func (in *Input) Read(b []byte) (int, error) {
	if err := in.ctx.Err(); err != nil {
		return 0, &fs.PathError{Op: "read", Path: in.f.Name(), Err: err}
	}
	if in.n > in.limit {
		return 0, &fs.PathError{Op: "read", Path: in.f.Name(), Err: fmt.Errorf("%w: over the %s limit", ErrTooLarge, sizeText(in.limit))}
	}
	if rest := in.limit - in.n + 1; int64(len(b)) > rest {
		b = b[:rest]
	}
	n, err := in.f.Read(b)
	in.n += int64(n)
	if err != nil && in.ctx.Err() != nil {
		return n, &fs.PathError{Op: "read", Path: in.f.Name(), Err: in.ctx.Err()}
	}
	if in.n > in.limit {
		return n, &fs.PathError{Op: "read", Path: in.f.Name(), Err: fmt.Errorf("%w: over the %s limit", ErrTooLarge, sizeText(in.limit))}
	}
	return n, err
}

// ReadAt reads a regular file at off (for gzip and zip readers); the
// limit was checked at open.
func (in *Input) ReadAt(b []byte, off int64) (int, error) { return in.f.ReadAt(b, off) }

// Stat returns the file's information.
func (in *Input) Stat() (fs.FileInfo, error) { return in.f.Stat() }

// Name is the path the file was opened by.
func (in *Input) Name() string { return in.f.Name() }

// Close closes the file.
func (in *Input) Close() error { in.stop(); return in.f.Close() }

// ReadInput reads the whole of the file p the user named, with
// [OpenInput]'s bounds.
func ReadInput(ctx context.Context, p string, limit int64, pipe bool) ([]byte, error) {
	in, err := OpenInput(ctx, p, limit, pipe)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	return io.ReadAll(in)
}

// sizeText writes a limit as "16 GiB", "256 MiB" or "1 MiB".
func sizeText(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// openFIFO opens the FIFO p for reading, which blocks until a writer opens
// it; when ctx is done first, it opens p for writing itself to end the
// wait and returns ctx's error.
func openFIFO(ctx context.Context, p string) (*os.File, error) {
	type result struct {
		f   *os.File
		err error
	}
	ch := make(chan result, 1)
	go func() {
		f, err := os.OpenFile(p, os.O_RDONLY|unix.O_CLOEXEC, 0)
		ch <- result{f, err}
	}()
	select {
	case r := <-ch:
		return r.f, r.err
	case <-ctx.Done():
		if w, err := os.OpenFile(p, os.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0); err == nil {
			w.Close()
		}
		if r := <-ch; r.f != nil {
			r.f.Close()
		}
		return nil, &fs.PathError{Op: "open", Path: p, Err: ctx.Err()}
	}
}
