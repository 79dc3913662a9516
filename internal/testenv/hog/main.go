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
	"time"
)

func main() {
	var (
		writeBytes = flag.Int64("write", 0, "bytes to write to --file (then fsync)")
		file       = flag.String("file", "", "file to write")
		readPasses = flag.Int("read-passes", 0, "times to read --file back after writing")
		anonBytes  = flag.Int64("anon", 0, "bytes of anonymous memory to allocate and touch")
		anonRate   = flag.Int64("anon-rate", 0, "if set, grow anon memory at this many bytes per second up to --anon")
		hold       = flag.Duration("hold", 0, "keep running (and the memory) this long at the end")
		chunk      = flag.Int("chunk", 1<<20, "write size")
	)
	flag.Parse()
	if *writeBytes > 0 {
		if err := writeFile(*file, *writeBytes, *chunk); err != nil {
			fmt.Fprintln(os.Stderr, "hog:", err)
			os.Exit(1)
		}
	}
	for i := 0; i < *readPasses; i++ {
		if err := readFile(*file); err != nil {
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

func writeFile(path string, n int64, chunk int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	buf := make([]byte, chunk)
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

func readFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	for {
		_, err := f.Read(buf)
		if err != nil {
			return nil
		}
	}
}
