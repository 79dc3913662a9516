package victim

import (
	"bytes"
	"context"
	"github.com/memdiag/memdiag/internal/rootfs"
	"io"
	"net/url"
	"regexp"
	"strings"
)

// Target is a URL the service whose latency is measured may listen
// behind, and where memdiag read it. Find tries each in turn.
type Target struct {
	URL  string // an http:// or https:// URL with a host
	How  string // record.VictimFromProbe, VictimFromLatency or VictimFromCommand
	From string // where it was read, for messages: "--probe", "--latency k6.csv", "the command after --"
}

// URLInArgs is the first argument of a wrapped load command that is, or
// ends in (--url=URL), an http:// or https:// URL with a host: the
// target of `hey -z 60s http://127.0.0.1:8080/`, `wrk -d 30s URL`, `ab
// -n 1000 URL`, `vegeta`'s `-targets` aside — or such a word of a shell
// command line given as one argument (`sh -c 'hey -o csv URL > hey.csv'`).
// "" when there is none.
func URLInArgs(args []string) string {
	for _, arg := range args {
		for _, a := range strings.Fields(arg) {
			a = strings.Trim(a, `"'`)
			if i := strings.Index(a, "="); i > 0 && strings.HasPrefix(a, "-") {
				a = a[i+1:]
			}
			if isHTTPURL(a) {
				return a
			}
		}
	}
	return ""
}

// fileURLBytes is how much of a load-test file URLInFile reads: the
// header and first rows, where a tool that records the request URL
// (vegeta's and k6's CSV, JMeter's CSV and XML) has written it.
const fileURLBytes = 64 << 10

// urlRE matches an http(s) URL as load-test files write it: up to a
// quote, comma, space or tag end.
var urlRE = regexp.MustCompile(`https?://[^\s",'<>]+`)

// URLInFile is the first http:// or https:// URL with a host in the
// first 64 KiB of a load-test results file (path), "" when there is none
// (hey, ab, Locust and Gatling files do not record it). A file that does
// not exist yet is "" with its error.
func URLInFile(path string) (string, error) {
	f, err := rootfs.OpenInput(context.Background(), path, rootfs.LatencyLimit, false)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, fileURLBytes))
	if err != nil {
		return "", err
	}
	return URLInText(b), nil
}

// URLInText is the first http:// or https:// URL with a host in b.
func URLInText(b []byte) string {
	for _, m := range urlRE.FindAll(b, -1) {
		if s := string(bytes.TrimRight(m, ".;)]}")); isHTTPURL(s) {
			return s
		}
	}
	return ""
}

func isHTTPURL(s string) bool {
	if !strings.HasPrefix(s, "http://") && !strings.HasPrefix(s, "https://") {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && u.Host != "" && u.Hostname() != ""
}
