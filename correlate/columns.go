package correlate

// The series keeps a recording's per-interval and per-sample data in
// columns of fixed-size values (issue 32): a day is 86,400 intervals,
// and as one growing slice each column would be copied whole at every
// growth (old and new arrays live at once) and hold up to a quarter
// spare; as per-interval objects with pointers (time.Time, slices) the
// garbage collector would scan it all at every cycle. A column of
// pointer-free values in chunks is neither copied nor scanned.

// chunkLen is the length of a column's chunks after the first, which
// grows from small as a slice does so that a short series (a window of
// the service, a test) holds no large chunk.
const chunkLen = 1 << 12

// column is a sequence of values appended one at a time, stored in
// chunks that are never copied once full.
type column[T any] struct {
	chunks [][]T
	n      int
}

func (c *column[T]) add(v T) {
	switch k := len(c.chunks); {
	case k == 0:
		c.chunks = append(c.chunks, make([]T, 0, 16))
	case len(c.chunks[k-1]) == chunkLen:
		c.chunks = append(c.chunks, make([]T, 0, chunkLen))
	}
	last := &c.chunks[len(c.chunks)-1]
	*last = append(*last, v)
	c.n++
}

func (c *column[T]) len() int { return c.n }

// at is value i (0 ≤ i < len).
func (c *column[T]) at(i int) *T { return &c.chunks[i/chunkLen][i%chunkLen] }

// rowChunk is how many values a chunk of a rows column holds at least,
// once the first chunk is full.
const rowChunk = 1 << 15

// rows is a sequence of rows of values (a sample's packed processes, an
// interval's catalogue rates), each stored whole in one chunk.
type rows[T any] struct {
	chunks [][]T
	ref    []rowRef
}

// rowRef is where row i is: chunks[chunk][from:to].
type rowRef struct{ chunk, from, to uint32 }

// add appends vals as the next row.
func (r *rows[T]) add(vals []T) {
	k := len(r.chunks) - 1
	switch {
	case k < 0:
		r.chunks = append(r.chunks, make([]T, 0, max(len(vals), 64)))
		k = 0
	case len(r.chunks[k])+len(vals) > cap(r.chunks[k]) && cap(r.chunks[k]) >= rowChunk:
		// Full: the next chunk; a full chunk is never copied.
		r.chunks = append(r.chunks, make([]T, 0, max(len(vals), rowChunk)))
		k++
	}
	from := len(r.chunks[k])
	// The first chunk grows as a slice does, until rowChunk.
	r.chunks[k] = append(r.chunks[k], vals...)
	r.ref = append(r.ref, rowRef{uint32(k), uint32(from), uint32(len(r.chunks[k]))})
}

func (r *rows[T]) len() int { return len(r.ref) }

// row is row i (0 ≤ i < len); it must not be appended to.
func (r *rows[T]) row(i int) []T {
	f := r.ref[i]
	return r.chunks[f.chunk][f.from:f.to:f.to]
}

// release lets go of the chunks, from chunk from on, that hold only rows
// before row i, for a pass that copies the rows out in order (Trim); it
// returns the first chunk not let go, the next call's from. The rows
// before i must not be read again.
func (r *rows[T]) release(i, from int) int {
	to := len(r.chunks)
	if i < len(r.ref) {
		to = int(r.ref[i].chunk)
	}
	for c := from; c < to; c++ {
		r.chunks[c] = nil
	}
	return max(from, to)
}
