// Package latency measures request latency with a built-in HTTP probe,
// imports and follows load-test results (vegeta, JMeter JTL, k6, Locust,
// hey, generic CSV), and summarises requests per sampling interval.
//
// # Sources
//
// [Probe] sends a GET to one URL every [ProbeOptions.Interval] (default
// 200 ms) over one keep-alive connection, one request at a time, with a
// timeout; it observes a service without loading it.
//
// [Import] and [ImportFile] read a finished results file; [Follow] reads
// one while the load test writes it. The format is detected from the
// content by [detect] or forced by name ([Formats]):
//
//	format       produced by                              row time is       latency
//	vegeta-csv   vegeta encode --to csv                   request start     ns to end of body
//	vegeta-json  vegeta encode --to json                  request start     ns to end of body
//	jmeter       jmeter -l results.jtl (CSV, ± header)    sample start      elapsed ms
//	k6-json      k6 run --out json=FILE                   request end       http_req_duration ms
//	k6-csv       k6 run --out csv=FILE                    request end (1 s) http_req_duration ms
//	locust       locust --csv P (P_stats_history.csv)     row written (1 s) per-interval stats only
//	hey          hey -o csv                               offset from start response-time s
//	generic      timestamp,latency[,status]               request start     unit in header or value
//	ab           ab -g FILE (gnuplot TSV)                 request start (1 s) ttime ms
//
// Any of them may be gzip-compressed. Failed requests count in
// [Summary.Count] and [Summary.Errors] but not in its latency statistics
// (see [SummarizeRequests]); [Imported.Within] clips an import to a
// recording and [ImportReport.Check] and [ImportReport.Describe] say
// what was kept. Locust's exact per-request rows come from the request
// hook in docs/latency.md (generic format).
//
// [Request.Start] is always the request start: for k6 it is the end
// minus the latency. Request.Err is what the tool marked as failed
// (vegeta's error text, JMeter's success=false, k6's expected_response);
// where the tool marks nothing it is a missing response or a status
// outside 200–399.
//
// Format limitations, all from what the tools write:
//   - Locust writes no per-request rows. Each stats-history row becomes an
//     [IntervalStat] (summarised with [BucketIntervals]): Count, Errors and
//     Mean exact since the previous row, percentiles over Locust's sliding
//     ~10 s window — or over the whole run unless Locust ran with
//     --csv-full-history, which makes them useless for spikes. Stamps are
//     whole seconds; Locust rounds response times before its percentiles
//     and flushes only every 10 s, so a run's last seconds may be missing.
//   - hey writes only offsets from an unrecorded start
//     ([ImportOptions.Start]; [ImportFile] anchors the last request's end
//     at the file's mtime), with 100 µs resolution, at the end of the run,
//     and no rows for requests that got no response.
//   - k6's http_req_duration excludes DNS, connect and TLS time, and its
//     CSV stamps are whole seconds by default.
//   - JMeter sub-results (a redirect's "label-0") are separate rows;
//     timeStamp is the start with JMeter's shipped
//     sampleresult.timestamp.start=true.
//
// Timestamps may be epoch seconds, ms, µs or ns (told apart by size) or
// RFC 3339 dates with any zone; dates without a zone need
// [ImportOptions.Location]. A bad row never aborts an import and is never
// dropped silently: [ImportReport] counts it and lists its line number.
//
// # Summaries
//
// [Summarize] and [bucket] give count, errors, mean and nearest-rank
// p50/p95/p99/max of the requests that started in (from, to] — with a
// recording's sample times as edges, one [Summary] per sampling interval.
//
// # Wiring (for cmd)
//
// memdiag watch --probe URL [--probe-interval 200ms] [--probe-timeout 5s]:
//
//	p, err := latency.NewProbe(url, latency.ProbeOptions{Interval: iv, Timeout: to})
//	ch := make(chan latency.Request, 64)
//	go p.Run(ctx, ch) // returns ctx.Err() when ctx ends; does not close ch
//	// keep the requests; at each sample: latency.Summarize(reqs, prev.Time, cur.Time)
//
// memdiag watch --latency FILE [--latency-format NAME]:
//
//	go func() {
//		rep, err := latency.Follow(ctx, file, latency.FollowOptions{
//			ImportOptions: latency.ImportOptions{Format: name, Location: loc},
//			Intervals:     ivCh,                                      // Locust rows
//			OnBad:         func(e latency.LineError) { log.Warn(...) }, // live
//		}, ch)
//		// err: unreadable file or unknown format; else report rep.Err() once
//	}()
//
// memdiag analyze REC --latency FILE [--latency-format NAME]:
//
//	imp, err := latency.ImportFile(file, latency.ImportOptions{Format: name, Location: loc, LatencyUnit: unit, Start: start})
//	// err: unreadable or unknown format (errors.Is(err, latency.ErrFormat));
//	// imp.Report.Err(): bad rows, print once as a warning.
//	// per sampling interval (Start, End]: the requests that started in it
//	s := latency.SummarizeRequests(inInterval, withFailed)
//	// or, for a tool that writes only aggregates (Locust):
//	per := latency.BucketIntervals(imp.Intervals, "Aggregated", sampleTimes)
//
// Suggested flags for the options: --latency-format (one of [Formats]),
// --latency-tz (Location, for zone-less dates), --latency-unit (LatencyUnit,
// for a generic CSV with bare numbers), --latency-start (Start, for hey; by
// default ImportFile anchors hey's last request at the file's mtime).
package latency
