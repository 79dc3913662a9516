// Command hugelines writes recordings with very long lines, for
// bench/hugelines.sh: it copies the header and samples of a small
// recording (bench/genrec) and pads sample lines with spaces inside the
// JSON object, so that they stay valid samples, or inserts a line of junk.
//
//	hugelines -in small.jsonl -out one.jsonl -junk 65MiB-line-after 10
//	hugelines -in small.jsonl -out many.jsonl.gz -pad 48 -lines 100
package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	in := flag.String("in", "", "recording to take the header and samples from (plain)")
	out := flag.String("out", "", "recording to write (.gz compresses)")
	padMiB := flag.Int("pad", 0, "pad each of the first -lines samples to this many MiB")
	lines := flag.Int("lines", 0, "samples to pad")
	junkMiB := flag.Int("junk", 0, "insert one line of this many MiB of 'x' (not JSON) after the tenth sample")
	flag.Parse()
	if err := run(*in, *out, *padMiB, *lines, *junkMiB); err != nil {
		fmt.Fprintln(os.Stderr, "hugelines:", err)
		os.Exit(1)
	}
}

func run(in, out string, padMiB, lines, junkMiB int) error {
	src, err := os.Open(in)
	if err != nil {
		return err
	}
	defer src.Close()
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	var w io.Writer = f
	var gz *gzip.Writer
	if strings.HasSuffix(out, ".gz") {
		gz, _ = gzip.NewWriterLevel(f, gzip.BestSpeed)
		w = gz
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	sc := bufio.NewScanner(src)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	n := 0
	space := bytes.Repeat([]byte(" "), 1<<20)
	for sc.Scan() {
		l := sc.Bytes()
		isSample := bytes.HasPrefix(l, []byte(`{"type":"sample"`))
		if isSample && n < lines && padMiB > 0 {
			bw.Write(l[:len(l)-1])
			for range padMiB {
				bw.Write(space)
			}
			bw.Write([]byte("}\n"))
		} else {
			bw.Write(l)
			bw.Write([]byte("\n"))
		}
		if isSample {
			n++
			if n == 10 && junkMiB > 0 {
				x := bytes.Repeat([]byte("x"), 1<<20)
				for range junkMiB {
					bw.Write(x)
				}
				bw.Write([]byte("\n"))
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if gz != nil {
		return gz.Close()
	}
	return nil
}
