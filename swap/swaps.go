package swap

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/memdiag/memdiag/internal/rootfs"
	"github.com/prometheus/procfs"
)

// Swaps reads <procRoot>/swaps once, with prometheus/procfs, and returns
// the active swap areas in the kernel's order. No swap configured is an
// empty slice and no error.
//
// Source: /proc/swaps (mm/swapfile.c, swap_show), sizes in KiB;
// https://docs.kernel.org/filesystems/proc.html.
func Swaps(procRoot string) ([]Device, error) {
	// procfs opens without O_NONBLOCK and follows links: vet the file in
	// the jail first (a FIFO, a device or a link out of the root).
	if err := rootfs.Check(procRoot, "swaps"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	pfs, err := procfs.NewFS(procRoot)
	if err != nil {
		return nil, err
	}
	sw, err := pfs.Swaps()
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, err // names the file already
		}
		// procfs's parse errors name neither the file nor the line.
		return nil, fmt.Errorf("%s: %w", filepath.Join(procRoot, "swaps"), err)
	}
	out := make([]Device, 0, len(sw))
	for _, s := range sw {
		if s.Size < 0 || s.Used < 0 {
			return nil, fmt.Errorf("%s: %s: negative size or used", filepath.Join(procRoot, "swaps"), s.Filename)
		}
		out = append(out, Device{
			Filename: s.Filename,
			Type:     s.Type,
			// swap_show prints sizes in KiB: it shifts the page count by
			// (PAGE_SHIFT - 10). Convert once, here, to bytes.
			SizeBytes: uint64(s.Size) * 1024,
			UsedBytes: uint64(s.Used) * 1024,
			Priority:  s.Priority,
		})
	}
	return out, nil
}
