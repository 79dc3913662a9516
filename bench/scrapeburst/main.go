// Command scrapeburst sends N concurrent GETs of a /metrics URL at once —
// one burst — and prints one CSV line on stdout:
//
//	start_unix,end_unix,ok,failed,p50_ms,max_ms
//
// start_unix and end_unix are the burst's first request and last answer
// (Unix seconds, with fractions); ok counts answers with status 200 and a
// body read to its end; failed counts the rest (connection errors,
// timeouts, other statuses), with the first few errors on stderr; p50_ms
// and max_ms are the requests' latencies in milliseconds. bench/soak.sh
// runs it once a minute beside a Prometheus scraping the same endpoint.
//
//	scrapeburst -url http://127.0.0.1:9465/metrics -n 200 -timeout 10s
package main

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"
)

func main() {
	url := flag.String("url", "", "the /metrics URL to scrape")
	n := flag.Int("n", 200, "concurrent requests in the burst")
	timeout := flag.Duration("timeout", 10*time.Second, "a request not answered in full after this long fails")
	flag.Parse()
	if *url == "" || *n < 1 {
		fmt.Fprintln(os.Stderr, "scrapeburst: -url is required and -n must be at least 1")
		os.Exit(2)
	}
	// One connection per request, none reused: N scrapers, as N Prometheus
	// servers would be.
	client := &http.Client{Timeout: *timeout, Transport: &http.Transport{DisableKeepAlives: true, MaxConnsPerHost: 0}}
	lat := make([]time.Duration, *n)
	errs := make([]error, *n)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range *n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.Now()
			errs[i] = get(client, *url)
			lat[i] = time.Since(t)
		}()
	}
	wg.Wait()
	end := time.Now()
	failed, shown := 0, 0
	for _, err := range errs {
		if err != nil {
			failed++
			if shown < 3 {
				fmt.Fprintln(os.Stderr, "scrapeburst:", err)
				shown++
			}
		}
	}
	slices.Sort(lat)
	fmt.Printf("%.3f,%.3f,%d,%d,%.1f,%.1f\n", float64(start.UnixMilli())/1e3, float64(end.UnixMilli())/1e3,
		*n-failed, failed, ms(lat[len(lat)/2]), ms(lat[len(lat)-1]))
}

func get(c *http.Client, url string) error {
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return fmt.Errorf("%s: reading the body: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: status %s", url, resp.Status)
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }
