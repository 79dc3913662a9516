// Command hog is a test workload for memdiag's end-to-end tests: it writes
// a known number of bytes to a file (through the page cache, then fsync),
// optionally reads files back, and allocates and touches anonymous memory,
// then holds it. Everything it does is stated in its flags so tests can
// assert exact amounts.
package main

import (
	"flag"
	"fmt"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ioMode is how a burst reads and writes its file.
type ioMode struct {
	direct bool // O_DIRECT: the page cache is not used
	drop   bool // posix_fadvise DONTNEED before each read pass: a cold read
}

// aligned returns a buffer of n bytes aligned to 4 KiB, as O_DIRECT
// needs (n a multiple of 4 KiB for O_DIRECT).
func aligned(n int) []byte {
	b := make([]byte, n+4096)
	off := int(uintptr(unsafe.Pointer(&b[0])) & 4095)
	if off != 0 {
		off = 4096 - off
	}
	return b[off : off+n]
}

func main() {
	var (
		writeBytes = flag.Int64("write", 0, "bytes to write to --file (then fsync)")
		file       = flag.String("file", "", "file to write")
		readPasses = flag.Int("read-passes", 0, "times to read --file back after writing")
		anonBytes  = flag.Int64("anon", 0, "bytes of anonymous memory to allocate and touch")
		anonRate   = flag.Int64("anon-rate", 0, "if set, grow anon memory at this many bytes per second up to --anon")
		hold       = flag.Duration("hold", 0, "keep running (and the memory) this long at the end")
		chunk      = flag.Int("chunk", 1<<20, "write size")
		readFor    = flag.Duration("read-for", 0, "after the read passes, keep reading --file until this long after the burst began")
		repeat     = flag.Int("repeat", 1, "bursts (write, read passes, --read-for) to do, one per --every")
		every      = flag.Duration("every", 0, "time from one burst's start to the next's (an in-app schedule)")
		first      = flag.Duration("first", 0, "wait this long before the first burst")
		direct     = flag.Bool("direct", false, "write and read --file with O_DIRECT: no page cache")
		drop       = flag.Bool("drop", false, "drop --file's pages from the page cache before each read pass (posix_fadvise DONTNEED)")
	)
	flag.Parse()
	begin := time.Now().Add(*first)
	for b := 0; b < *repeat; b++ {
		time.Sleep(time.Until(begin.Add(time.Duration(b) * *every)))
		if err := burst(*file, *writeBytes, *chunk, *readPasses, *readFor, ioMode{direct: *direct, drop: *drop}); err != nil {
			fmt.Fprintln(os.Stderr, "hog:", err)
			os.Exit(1)
		}
	}
	var keep [][]byte
	if *anonBytes > 0 {
		const step = 4 << 20
		start := time.Now()
		for have := int64(0); have < *anonBytes; have += step {
			b := make([]byte, step)
			for i := 0; i < len(b); i += 4096 {
				b[i] = 1
			}
			keep = append(keep, b)
			if *anonRate > 0 {
				due := start.Add(time.Duration(float64(have+step) / float64(*anonRate) * float64(time.Second)))
				time.Sleep(time.Until(due))
			}
		}
	}
	time.Sleep(*hold)
	// Touch again so the memory stays live until the end.
	n := 0
	for _, b := range keep {
		n += int(b[0])
	}
	fmt.Println("hog: done", n)
}

// burst writes n bytes to path (if n > 0), reads it passes times, then
// keeps reading it until readFor has passed since the burst began.
func burst(path string, n int64, chunk, passes int, readFor time.Duration, m ioMode) error {
	start := time.Now()
	if n > 0 {
		if err := writeFile(path, n, chunk, m); err != nil {
			return err
		}
	}
	for i := 0; i < passes || (readFor > 0 && time.Since(start) < readFor); i++ {
		if err := readFile(path, m); err != nil {
			return err
		}
	}
	return nil
}

func writeFile(path string, n int64, chunk int, m ioMode) error {
	flags := os.O_RDWR | os.O_CREATE | os.O_TRUNC
	if m.direct {
		flags |= syscall.O_DIRECT
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		return err
	}
	buf := aligned(chunk)
	for i := range buf {
		buf[i] = byte(i)
	}
	for left := n; left > 0; {
		w := int64(len(buf))
		if left < w {
			w = left
		}
		if _, err := f.Write(buf[:w]); err != nil {
			f.Close()
			return err
		}
		left -= w
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func readFile(path string, m ioMode) error {
	flags := os.O_RDONLY
	if m.direct {
		flags |= syscall.O_DIRECT
	}
	f, err := os.OpenFile(path, flags, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if m.drop {
		if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
			return err
		}
	}
	buf := aligned(1 << 20)
	for {
		_, err := f.Read(buf)
		if err != nil {
			return nil
		}
	}
}
