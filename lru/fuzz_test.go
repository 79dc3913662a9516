package lru

import (
	"strconv"
	"strings"
	"testing"

	"github.com/memdiag/memdiag/internal/testutil"
)

// FuzzParseVMStat checks that no /proc/vmstat (or memory.stat) panics the
// parser, that errors name the file, and that every counter it keeps is
// the decimal number written.
func FuzzParseVMStat(f *testing.F) {
	testutil.Seed[string](f, "../testdata/linux-6.18/proc/vmstat", "../testdata/linux-3.x-goprocinfo/proc/vmstat", "../testdata/node-exporter-old/proc/vmstat")
	f.Add("pgmajfault 18446744073709551616\n")
	f.Fuzz(func(t *testing.T, text string) {
		vals, err := parseVMStat(strings.NewReader(text), "vmstat")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "vmstat") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for k, v := range vals {
			// The last line naming a counter wins.
			var last string
			for _, l := range strings.Split(text, "\n") {
				// bufio.ScanLines drops a line's trailing \r (CRLF files).
				l = strings.TrimSuffix(l, "\r")
				if name, val, ok := strings.Cut(l, " "); ok && vmstatWanted[name] == k {
					last = val
				}
			}
			if n, err := strconv.ParseUint(last, 10, 64); err != nil || n != v {
				t.Fatalf("%s = %d, written %q", k, v, last)
			}
		}
		ParseVMStat(strings.NewReader(text), "vmstat")
	})
}
