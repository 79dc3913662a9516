package record

import (
	"bytes"
	"strconv"
	"time"
)

// parsePSILine reads a PSI line written exactly as [PSILine.MarshalJSON]
// writes it — {"avg10":A,"avg60":B,"avg300":C,"total_us":N}, those keys in
// that order, no spaces, numbers by the JSON grammar, N an integer of at
// most 18 digits — and returns false for anything else, which the caller
// hands to the JSON decoder. Hand parsing for speed: a day's recording
// has 518,400 of these lines, and the decoder parsed each one twice (it
// copies a value before calling UnmarshalJSON, then again to decode it);
// BenchmarkPSILineUnmarshal, FuzzParsePSILine checks it against the
// decoder (docs/benchmarks.md, round four).
func parsePSILine(b []byte) (PSILine, bool) {
	var l PSILine
	var ok bool
	if b, ok = cut(b, `{"avg10":`); !ok {
		return l, false
	}
	if l.Avg10, b, ok = jsonFloat(b); !ok {
		return l, false
	}
	if b, ok = cut(b, `,"avg60":`); !ok {
		return l, false
	}
	if l.Avg60, b, ok = jsonFloat(b); !ok {
		return l, false
	}
	if b, ok = cut(b, `,"avg300":`); !ok {
		return l, false
	}
	if l.Avg300, b, ok = jsonFloat(b); !ok {
		return l, false
	}
	if b, ok = cut(b, `,"total_us":`); !ok {
		return l, false
	}
	n := jsonNumberLen(b)
	if n == 0 || n > 18 || len(b) != n+1 || b[n] != '}' {
		return l, false
	}
	var us int64
	for _, c := range b[:n] {
		if c < '0' || c > '9' {
			if c == '-' {
				continue
			}
			return l, false // a fraction or an exponent: the decoder says what it makes of it
		}
		us = us*10 + int64(c-'0')
	}
	if b[0] == '-' {
		us = -us
	}
	l.Total = time.Duration(us) * time.Microsecond
	return l, true
}

func cut(b []byte, prefix string) ([]byte, bool) {
	if !bytes.HasPrefix(b, []byte(prefix)) {
		return b, false
	}
	return b[len(prefix):], true
}

// jsonFloat parses the JSON number at the start of b to the float64
// strconv.ParseFloat makes of it (which is the decoder's: correctly
// rounded), and returns the rest of b. A number of at most 15 digits
// and at most 22 after the point (PSI's averages: "0.17") is its digits
// as a float64, exact below 2^53, divided by a power of ten a float64
// holds exactly, one correctly rounded division (Clinger's fast path,
// as the decoder's own parser); any other goes to strconv.ParseFloat.
func jsonFloat(b []byte) (float64, []byte, bool) {
	n := jsonNumberLen(b)
	if n == 0 {
		return 0, b, false
	}
	if f, ok := clinger(b[:n]); ok {
		return f, b[n:], true
	}
	f, err := strconv.ParseFloat(string(b[:n]), 64)
	if err != nil { // out of range: the decoder's error
		return 0, b, false
	}
	return f, b[n:], true
}

// pow10 are the powers of ten a float64 holds exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// clinger is the float64 of the JSON number num when it has no exponent,
// at most 15 digits and at most 22 of them after the point; false
// otherwise.
func clinger(num []byte) (float64, bool) {
	var m uint64
	digits, frac, point := 0, 0, false
	neg := num[0] == '-'
	if neg {
		num = num[1:]
	}
	for _, c := range num {
		switch {
		case c >= '0' && c <= '9':
			m = m*10 + uint64(c-'0')
			digits++
			if point {
				frac++
			}
		case c == '.':
			point = true
		default: // an exponent
			return 0, false
		}
	}
	if digits > 15 || frac >= len(pow10) {
		return 0, false
	}
	f := float64(m) / pow10[frac]
	if neg {
		f = -f
	}
	return f, true
}

// jsonNumberLen is the length of the JSON number at the start of b
// (-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?), 0 for none.
func jsonNumberLen(b []byte) int {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return 0
	}
	if i < len(b) && b[i] == '.' {
		j := i + 1
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		if j == i+1 {
			return 0
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		j := i + 1
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		k := j
		for k < len(b) && b[k] >= '0' && b[k] <= '9' {
			k++
		}
		if k == j {
			return 0
		}
		i = k
	}
	return i
}
