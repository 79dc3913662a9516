package victim

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memdiag/memdiag/record"
)

func TestURLInArgs(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"hey", "-z", "60s", "-c", "4", "http://127.0.0.1:8080/"}, "http://127.0.0.1:8080/"},
		{[]string{"wrk", "-t2", "-d30s", "https://localhost:8443/api?q=1"}, "https://localhost:8443/api?q=1"},
		{[]string{"./load", "--url=http://[::1]:9000/x", "http://127.0.0.1:1/"}, "http://[::1]:9000/x"},
		{[]string{"k6", "run", "script.js"}, ""},
		// a word of a shell command line (the new-user trial's hey -o csv)
		{[]string{"sh", "-c", "hey -z 75s -o csv 'http://127.0.0.1:18080/f1.bin' > hey.csv"}, "http://127.0.0.1:18080/f1.bin"},
		{[]string{"curl", "http://"}, ""},
		{nil, ""},
	} {
		if got := URLInArgs(c.args); got != c.want {
			t.Errorf("URLInArgs(%q) = %q, want %q", c.args, got, c.want)
		}
	}
}

// TestURLInFile reads the target from real load-test files
// (testdata/latency/SOURCE says how each was made).
func TestURLInFile(t *testing.T) {
	dir := filepath.Join("..", "testdata", "latency")
	for file, want := range map[string]string{
		"k6.csv":               "http://127.0.0.1:8080/",
		"k6.json":              "http://127.0.0.1:8080/",
		"vegeta.csv":           "http://127.0.0.1:18931/hello.txt",
		"vegeta.jsonl":         "http://127.0.0.1:18931/hello.txt",
		"jmeter-5-header.jtl":  "http://127.0.0.1:18931/hello.txt",
		"jmeter-stall.xml.jtl": "http://127.0.0.1:18943/",
		"hey.csv":              "", // hey records no URL
		"ab.tsv":               "",
	} {
		got, err := URLInFile(filepath.Join(dir, file))
		if err != nil || got != want {
			t.Errorf("URLInFile(%s) = %q, %v; want %q", file, got, err, want)
		}
	}
	if _, err := URLInFile(filepath.Join(t.TempDir(), "not-yet.csv")); !os.IsNotExist(err) {
		t.Errorf("a file not there yet: %v, want not-exist", err)
	}
}

// TestFindTargets: the first target whose URL is local and listened on
// wins; the detail says where its URL was read; every miss is said.
func TestFindTargets(t *testing.T) {
	f := newFixtureFinder(t, fixtureRoot(t))
	ctx := context.Background()
	local := "http://127.0.0.1:" + fixPort + "/"
	v, st, err := f.Find(ctx, "", []Target{
		{URL: "http://203.0.113.9/", How: record.VictimFromProbe, From: "--probe"},
		{URL: "http://127.0.0.1:9/", How: record.VictimFromLatency, From: "--latency k6.csv"},
		{URL: local, How: record.VictimFromCommand, From: "the command after --"},
	})
	if err != nil || v == nil || v.PID != fixPID || v.How != record.VictimFromCommand || !st.Available ||
		!strings.HasPrefix(v.Detail, local+" in the command after --; 127.0.0.1:"+fixPort+" is a listening socket") {
		t.Fatalf("Find = %+v, %+v, %v", v, st, err)
	}
	_, st, err = f.Find(ctx, "", []Target{
		{URL: "http://203.0.113.9/", How: record.VictimFromProbe, From: "--probe"},
		{URL: "http://127.0.0.1:9/", How: record.VictimFromLatency, From: "--latency k6.csv"},
	})
	if err != nil || st.Available || !strings.Contains(st.Reason, "not found from --probe: 203.0.113.9 is not an address of this host") ||
		!strings.Contains(st.Reason, "not found from --latency k6.csv: ") || !strings.Contains(st.Reason, "--victim") {
		t.Errorf("no target found: %+v, %v", st, err)
	}
}

func FuzzURLInText(f *testing.F) {
	for _, s := range []string{"", "http://", "url,http://127.0.0.1:8080/,x", `"https://[::1]:9/"`, "http://%zz/", "https://a:b@c:1/?q=\"x\"", "<a href='http://h/'>"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		u := URLInText(b)
		if u != "" && !isHTTPURL(u) {
			t.Fatalf("URLInText(%q) = %q, not an http URL with a host", b, u)
		}
		if u != "" && !strings.Contains(string(b), u) {
			t.Fatalf("URLInText(%q) = %q, not in the input", b, u)
		}
	})
}
