package latency

import (
	"iter"
	"math"
	"time"
)

// reqChunk is how many requests one chunk of [Requests] holds: 16,384
// × 23 bytes ≈ 368 KiB, so a day's 1,000,000 requests leave at most one
// chunk's slack and are never copied to grow.
const reqChunk = 1 << 14

// Request flags in [Requests]'s flag column.
const (
	reqErr uint8 = 1 << iota // Request.Err
	reqOdd                   // held whole in Requests.odd (see there)
)

// reqRows is one chunk of [Requests]'s columns.
type reqRows struct {
	start  [reqChunk]int64 // Request.Start as Unix nanoseconds
	lat    [reqChunk]time.Duration
	status [reqChunk]int32
	flag   [reqChunk]uint8
	zone   [reqChunk]uint16 // index into Requests.zones: Request.Start's location
}

// Requests are imported requests in file order, held as columns without
// pointers: 23 bytes a request (start as Unix nanoseconds, latency,
// status, error flag, an index of the start's zone) against 48 for a
// [Request], whose time.Time holds a pointer the garbage collector scans
// at every cycle. A day of 1,000,000 requests is 23 MB the GC never
// reads (docs/benchmarks.md, round four). The zero value is empty and
// ready to use. [Requests.At] returns each request as it was appended:
// the same instant, latency, status and error, and a start in a
// location that formats as the appended one did.
type Requests struct {
	rows []*reqRows
	n    int
	// odd holds, by index, the rare requests the columns cannot: a
	// start outside the years 1678–2262 (Unix nanoseconds overflow) or a
	// status beyond int32.
	odd map[int]Request
	// zones are the starts' locations: the ones appended, by pointer,
	// then, once maxZones are taken by pointer, fixed zones of the
	// name and offset the start had (time.Parse makes a new fixed zone
	// for every timestamp with a foreign offset).
	zones  []*time.Location
	byLoc  map[*time.Location]uint16
	byName map[zoneKey]uint16
	last   *time.Location // the location of the latest append, and its index
	lastZ  uint16
}

type zoneKey struct {
	name string
	off  int
}

// maxZones is how many distinct location pointers are kept before the
// zones are keyed by name and offset.
const maxZones = 64

// RequestsOf returns qs as [Requests].
func RequestsOf(qs []Request) *Requests {
	r := &Requests{}
	for _, q := range qs {
		r.Append(q)
	}
	return r
}

// Len is the number of requests.
func (r *Requests) Len() int { return r.n }

// Append adds q at the end.
func (r *Requests) Append(q Request) {
	if r.n == len(r.rows)*reqChunk {
		r.rows = append(r.rows, new(reqRows))
	}
	r.n++
	r.set(r.n-1, q)
}

// set stores q at index i < r.n.
func (r *Requests) set(i int, q Request) {
	c, j := r.rows[i/reqChunk], i%reqChunk
	ns, ok := unixNano(q.Start)
	if !ok || q.Status != int(int32(q.Status)) {
		if r.odd == nil {
			r.odd = map[int]Request{}
		}
		r.odd[i] = q
		c.flag[j] = reqOdd
		return
	}
	if c.flag[j]&reqOdd != 0 {
		delete(r.odd, i)
	}
	c.start[j], c.lat[j], c.status[j] = ns, q.Latency, int32(q.Status)
	c.flag[j] = 0
	if q.Err {
		c.flag[j] = reqErr
	}
	c.zone[j] = r.zoneOf(q.Start)
}

// At returns request i (0 ≤ i < Len).
func (r *Requests) At(i int) Request {
	c, j := r.rows[i/reqChunk], i%reqChunk
	f := c.flag[j]
	if f&reqOdd != 0 {
		return r.odd[i]
	}
	return Request{
		Start:   time.Unix(0, c.start[j]).In(r.zones[c.zone[j]]),
		Latency: c.lat[j],
		Status:  int(c.status[j]),
		Err:     f&reqErr != 0,
	}
}

// Each yields every request with its index, in order.
func (r *Requests) Each() iter.Seq2[int, Request] {
	return func(yield func(int, Request) bool) {
		for i := range r.n {
			if !yield(i, r.At(i)) {
				return
			}
		}
	}
}

// Slice returns the requests as a slice, nil when there are none (for
// tests and small files; a large import is cheaper as columns).
func (r *Requests) Slice() []Request {
	if r.n == 0 {
		return nil
	}
	out := make([]Request, 0, r.n)
	for _, q := range r.Each() {
		out = append(out, q)
	}
	return out
}

// keep moves the requests for which ok is true to the front, in order,
// and drops the rest.
func (r *Requests) keep(ok func(Request) bool) {
	w := 0
	for i := range r.n {
		q := r.At(i)
		if !ok(q) {
			continue
		}
		if w != i {
			r.set(w, q)
		}
		w++
	}
	for i := w; i < r.n; i++ {
		delete(r.odd, i)
	}
	r.n = w
	r.rows = r.rows[:(w+reqChunk-1)/reqChunk]
}

// zoneOf is the index in r.zones of a location that formats t as t's own
// does.
func (r *Requests) zoneOf(t time.Time) uint16 {
	loc := t.Location()
	if loc == r.last && r.zones != nil {
		return r.lastZ
	}
	z, ok := r.byLoc[loc]
	if !ok && len(r.byLoc) < maxZones {
		if r.byLoc == nil {
			r.byLoc = map[*time.Location]uint16{}
		}
		z, ok = r.addZone(loc), true
		r.byLoc[loc] = z
	}
	if !ok {
		name, off := t.Zone()
		k := zoneKey{name, off}
		if z, ok = r.byName[k]; !ok {
			if len(r.zones) == math.MaxUint16 {
				return 0 // 65,535 zones: unlike any real file; the instant stays right
			}
			if r.byName == nil {
				r.byName = map[zoneKey]uint16{}
			}
			z = r.addZone(time.FixedZone(name, off))
			r.byName[k] = z
		}
		return z // not cached in last: another time in loc may have another offset
	}
	r.last, r.lastZ = loc, z
	return z
}

func (r *Requests) addZone(loc *time.Location) uint16 {
	r.zones = append(r.zones, loc)
	return uint16(len(r.zones) - 1)
}

// Unix nanoseconds represent the times from 1677-09-21 00:12:43.145224192
// to 2262-04-11 23:47:16.854775807 UTC.
var (
	minNano = time.Unix(0, math.MinInt64)
	maxNano = time.Unix(0, math.MaxInt64)
)

// unixNano is t as Unix nanoseconds, and false when they cannot hold it.
func unixNano(t time.Time) (int64, bool) {
	if t.Before(minNano) || t.After(maxNano) {
		return 0, false
	}
	return t.UnixNano(), true
}
