package latency

import "time"

// Request is one request's outcome, from the probe or an imported file.
type Request struct {
	Start   time.Time     // when the request was sent
	Latency time.Duration // time to the complete response
	Status  int           // HTTP status; 0 when the request failed without one
	Err     bool          // transport error, timeout, or a status the tool marked as failed
}

// Summary is the latency of the requests that started within one sampling
// interval. Durations are recorded in nanoseconds (the "_ns" fields).
// Count is every request and Errors the failed ones; Mean and the
// percentiles cover the successful requests (Count − Errors), or all of
// them when WithFailed is set. Recordings of memdiag before failures were
// counted apart hold statistics of all requests without WithFailed.
type Summary struct {
	Count      int           `json:"count"`
	Errors     int           `json:"errors,omitempty"`
	WithFailed bool          `json:"with_failed,omitempty"`
	Mean       time.Duration `json:"mean_ns"`
	P50        time.Duration `json:"p50_ns"`
	P95        time.Duration `json:"p95_ns"`
	P99        time.Duration `json:"p99_ns"`
	Max        time.Duration `json:"max_ns"`
}

// IntervalStat is one per-interval row of a tool that writes no
// per-request rows (Locust's stats history; see the limitations there).
type IntervalStat struct {
	End    time.Time     `json:"end"`              // when the row was written (whole seconds for Locust)
	Method string        `json:"method,omitempty"` // HTTP method ("Type"), "" for the Aggregated row
	Name   string        `json:"name"`             // request name; "Aggregated" for all requests
	Users  int           `json:"users"`            // simulated users at End
	Window time.Duration `json:"window_ns"`        // span the percentiles and Max cover, ending at End; 0: the whole run so far
	// Count, Errors and Mean cover the requests completed since the
	// previous row of this name; P50, P95, P99 and Max cover Window.
	Summary
}
