// Command websvc is the small HTTP service of memdiag's end-to-end tests:
// each request reads a random 256 KiB chunk of a data file (page cache)
// and touches a slice of its anonymous working set, so its latency rises
// when memory pressure evicts its cache or its memory. It listens on
// 127.0.0.1 only and prints its address on stdout.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"sync"
	"time"
)

func main() {
	var (
		data    = flag.String("data", "", "data file read by requests (created with --data-size if missing)")
		size    = flag.Int64("data-size", 96<<20, "size of the data file to create")
		anon    = flag.Int64("anon", 32<<20, "anonymous working set in bytes")
		addrArg = flag.String("addr", "127.0.0.1:0", "listen address (loopback)")
		// A known stall for latency tests: a request that arrives in the
		// first stall of each stall-every period (counted from start) is
		// held for stall before it is served.
		stallEvery = flag.Duration("stall-every", 0, "stall period (0: never)")
		stall      = flag.Duration("stall", 300*time.Millisecond, "how long each stall holds a request")
	)
	flag.Parse()
	if fi, err := os.Stat(*data); err != nil || fi.Size() < *size {
		if err := create(*data, *size); err != nil {
			fmt.Fprintln(os.Stderr, "websvc:", err)
			os.Exit(1)
		}
	}
	f, err := os.Open(*data)
	if err != nil {
		fmt.Fprintln(os.Stderr, "websvc:", err)
		os.Exit(1)
	}
	ws := make([]byte, *anon)
	for i := 0; i < len(ws); i += 4096 {
		ws[i] = 1
	}
	var mu sync.Mutex
	const chunk = 256 << 10
	t0 := time.Now()
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if *stallEvery > 0 && time.Since(t0)%*stallEvery < *stall {
			time.Sleep(*stall)
		}
		buf := make([]byte, chunk)
		off := rand.Int64N(*size/chunk) * chunk
		if _, err := f.ReadAt(buf, off); err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		mu.Lock()
		start := rand.IntN(len(ws) / 4096)
		sum := 0
		for i := 0; i < 512; i++ {
			p := ((start + i) % (len(ws) / 4096)) * 4096
			ws[p]++
			sum += int(ws[p])
		}
		mu.Unlock()
		fmt.Fprintf(w, "ok %d %d\n", off, sum)
	})
	ln, err := net.Listen("tcp", *addrArg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "websvc:", err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr().String())
	fmt.Fprintln(os.Stderr, "websvc: stall periods count from", t0.Format(time.RFC3339Nano))
	_ = http.Serve(ln, nil)
}

func create(path string, n int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	for left := n; left > 0; left -= int64(len(buf)) {
		if _, err := f.Write(buf[:min(int64(len(buf)), left)]); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}
