package record

import (
	"encoding/binary"
	"time"
	"unicode/utf8"

	gojson "github.com/goccy/go-json"
)

// sampleDecoder reads a sample line written as [Writer.WriteSample] writes
// it and returns false for anything else, which the caller hands to the
// JSON decoder (github.com/goccy/go-json), as [parsePSILine] does for a
// PSI line. What it reads is what the writer's encoding/json writes: no
// space between tokens, each object's keys among its struct's JSON names
// and in the struct's field order (each at most once; an absent one stays
// zero, as with the decoder), integers without fraction or exponent,
// strings without control characters and of valid UTF-8 (one with an
// escape is unescaped by the decoder), no null, no empty array, and
// nothing after the line's closing brace. Sample.Retention, Chain and
// OOMKills, rare and nested deeper, are left to the decoder: a line that
// has one goes to it whole.
//
// Hand-written for speed: decoding the day's 86,400 lines with goccy took
// 1.2–1.5 s of CPU, the largest item of `memdiag analyze` (field names
// matched at run time, a string allocated for every process name at
// every sample, an allocation for every *uint64 counter and PSI line);
// this decoder reads them in 0.64 s, and a sample in half of goccy's time
// with a ninth of its allocations (BenchmarkDecodeSample,
// docs/benchmarks.md "Round five").
// TestSampleDecoderRecordings and FuzzSampleDecoder hold it to goccy's
// values.
//
// A sampleDecoder is one goroutine's: it keeps scratch slices and
// interns the strings it reads (process names, command lines, cgroups
// repeat from one sample to the next).
type sampleDecoder struct {
	b      []byte
	i      int
	strs   *[1 << internBits]string
	u64    []uint64 // a chunk the *uint64 counters point into
	procs  []ProcIO
	rss    []ProcRSS
	events []Event
	onsets []StallOnset
	disks  []Disk
	errs   []string
}

// internBits is log2 of the strings a sampleDecoder interns.
const internBits = 12

func newSampleDecoder() *sampleDecoder {
	return &sampleDecoder{strs: new([1 << internBits]string)}
}

// decodeSample decodes a sample line: by d when it reads it, else by the
// JSON decoder, whose error it returns.
func (d *sampleDecoder) decodeSample(line []byte) (*Sample, error) {
	if s, ok := d.sample(line); ok {
		return s, nil
	}
	s := new(Sample)
	if err := gojson.Unmarshal(line, s); err != nil {
		return nil, err
	}
	return s, nil
}

// sample is line decoded, or false when line is not what the writer
// writes.
func (d *sampleDecoder) sample(line []byte) (*Sample, bool) {
	d.b, d.i = line, 0
	s := new(Sample)
	if !object(d, s, sampleFields) || d.i != len(d.b) {
		return nil, false
	}
	return s, true
}

// field is one JSON name of a struct T, `"name":`, and how its value is
// read into a T.
type field[T any] struct {
	key string
	dec func(d *sampleDecoder, v *T) bool
}

// object reads a JSON object into v: keys among fields, in their order.
func object[T any](d *sampleDecoder, v *T, fields []field[T]) bool {
	if !d.byte('{') {
		return false
	}
	if d.byte('}') {
		return true
	}
	next := 0
	for {
		k := key(d, fields, next)
		if k < 0 || !fields[k].dec(d, v) {
			return false
		}
		next = k + 1
		if d.byte(',') {
			continue
		}
		return d.byte('}')
	}
}

// key is the index of the field among fields[next:] whose key is at the
// cursor, which it moves past it; -1 for none.
func key[T any](d *sampleDecoder, fields []field[T], next int) int {
	rest := d.b[d.i:]
	for k := next; k < len(fields); k++ {
		f := fields[k].key
		if len(rest) >= len(f) && string(rest[:len(f)]) == f {
			d.i += len(f)
			return k
		}
	}
	return -1
}

// byte moves past c when it is at the cursor.
func (d *sampleDecoder) byte(c byte) bool {
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// digits reads an unsigned JSON integer, 0|[1-9][0-9]*, of at most
// maxDigits digits, below 2^64 and not followed by a fraction or an
// exponent.
func (d *sampleDecoder) digits(maxDigits int) (uint64, bool) {
	b, i := d.b, d.i
	if i >= len(b) || b[i] < '0' || b[i] > '9' {
		return 0, false
	}
	var v uint64
	if b[i] == '0' {
		i++
	} else {
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			v = v*10 + uint64(b[i]-'0')
		}
	}
	n := i - d.i
	if n > maxDigits || (i < len(b) && (b[i] == '.' || b[i] == 'e' || b[i] == 'E')) {
		return 0, false
	}
	// 19 digits are below 2^64; 20 are when not above its 20 digits.
	if n == 20 && string(b[d.i:i]) > "18446744073709551615" {
		return 0, false
	}
	d.i = i
	return v, true
}

// uint64 reads a JSON integer below 2^64.
func (d *sampleDecoder) uint64(p *uint64) bool {
	v, ok := d.digits(20)
	*p = v
	return ok
}

// int64 reads a JSON integer of at most 18 digits, signed.
func (d *sampleDecoder) int64(p *int64) bool {
	neg := d.byte('-')
	v, ok := d.digits(18)
	*p = int64(v)
	if neg {
		*p = -*p
	}
	return ok
}

func (d *sampleDecoder) int(p *int) bool {
	var v int64
	ok := d.int64(&v)
	*p = int(v)
	return ok
}

func (d *sampleDecoder) duration(p *time.Duration) bool { return d.int64((*int64)(p)) }

// uint64p reads a JSON integer into a new *uint64, from a chunk shared by
// the counters of a few samples (one allocation instead of one each).
func (d *sampleDecoder) uint64p(p **uint64) bool {
	if len(d.u64) == 0 {
		d.u64 = make([]uint64, 128)
	}
	*p = &d.u64[0]
	d.u64 = d.u64[1:]
	return d.uint64(*p)
}

func (d *sampleDecoder) bool(p *bool) bool {
	rest := d.b[d.i:]
	switch {
	case len(rest) >= 4 && string(rest[:4]) == "true":
		*p, d.i = true, d.i+4
	case len(rest) >= 5 && string(rest[:5]) == "false":
		*p, d.i = false, d.i+5
	default:
		return false
	}
	return true
}

// quoted reads a JSON string and returns it with its quotes, and whether
// it has an escape; false for a string with a control character or
// invalid UTF-8. It looks at 8 bytes at a time for a byte that is not
// printable ASCII other than '"' and '\\' (most strings have none).
func (d *sampleDecoder) quoted() (q []byte, escaped, ok bool) {
	b := d.b
	if d.i >= len(b) || b[d.i] != '"' {
		return nil, false, false
	}
	i := d.i + 1
	for ; i+8 <= len(b); i += 8 {
		if special(binary.LittleEndian.Uint64(b[i:])) != 0 {
			break
		}
	}
	ascii := true
	for ; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			q, d.i = b[d.i:i+1], i+1
			return q, escaped, ascii || utf8.Valid(q)
		case c == '\\':
			escaped = true
			i++ // the escaped byte cannot end the string
		case c < 0x20:
			return nil, false, false
		case c >= 0x80:
			ascii = false
		}
	}
	return nil, false, false
}

// special has the high bit set in each byte of w that is below 0x20,
// '"', '\\' or at least 0x80 (and perhaps in a byte above such a one:
// it says only whether there is one).
func special(w uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	zero := func(v uint64) uint64 { return (v - ones) & ^v & highs }
	return ((w-0x20*ones)|w)&highs | zero(w^('"'*ones)) | zero(w^('\\'*ones))
}

// string reads a JSON string, interned; one with an escape is unescaped
// by the JSON decoder.
func (d *sampleDecoder) string(p *string) bool {
	q, escaped, ok := d.quoted()
	if !ok {
		return false
	}
	if escaped {
		return gojson.Unmarshal(q, p) == nil
	}
	*p = d.intern(q[1 : len(q)-1])
	return true
}

// intern is b as a string, the same string as the last time bytes that
// fall into the same slot of d.strs were read: a table indexed by a hash
// of b's length and of its first, middle and last 8 bytes, whose slot
// takes the newer string when two collide.
func (d *sampleDecoder) intern(b []byte) string {
	n := len(b)
	var first, middle, last uint64
	switch le := binary.LittleEndian; {
	case n == 0:
		return ""
	case n < 8:
		for _, c := range b {
			first = first<<8 | uint64(c)
		}
		middle, last = first, first
	default:
		first, middle, last = le.Uint64(b), le.Uint64(b[n/2-4:]), le.Uint64(b[n-8:])
	}
	h := uint64(n) * 0x9e3779b97f4a7c15
	h = (h ^ first) * 0xbf58476d1ce4e5b9
	h = (h ^ middle) * 0x94d049bb133111eb
	h = (h ^ last) * 0x9e3779b97f4a7c15
	slot := &d.strs[h>>(64-internBits)]
	if *slot != string(b) {
		*slot = string(b)
	}
	return *slot
}

// time reads a JSON string as time.Time's UnmarshalJSON does, which is
// what the JSON decoder calls.
func (d *sampleDecoder) time(p *time.Time) bool {
	q, escaped, ok := d.quoted()
	return ok && !escaped && p.UnmarshalJSON(q) == nil
}

// array reads a JSON array of at least one element, each by elem, into a
// slice of its exact length; scratch is reused between calls.
func array[T any](d *sampleDecoder, scratch *[]T, elem func(*sampleDecoder, *T) bool) ([]T, bool) {
	if !d.byte('[') {
		return nil, false
	}
	s := (*scratch)[:0]
	defer func() { *scratch = s }()
	for {
		var zero T
		s = append(s, zero)
		if !elem(d, &s[len(s)-1]) {
			return nil, false
		}
		if d.byte(',') {
			continue
		}
		if !d.byte(']') {
			return nil, false
		}
		return append(make([]T, 0, len(s)), s...), true
	}
}
