package record

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"

	json "github.com/goccy/go-json"
	gzip "github.com/klauspost/compress/gzip"
	"golang.org/x/sync/semaphore"

	"github.com/memdiag/memdiag/internal/lineio"
	"github.com/memdiag/memdiag/internal/rootfs"
)

// ErrFormat is wrapped by errors about a file that is not a recording or
// has a line that cannot be read.
var ErrFormat = errors.New("not a memdiag recording")

// ErrNoSamples is wrapped by errors about a recording with no sample to
// read: an empty file, a header cut short, a header and nothing after it.
var ErrNoSamples = errors.New("no samples")

// Recording is a whole recording read into memory.
type Recording struct {
	Header   Header
	Samples  []Sample
	End      *End     // nil when the recorder did not end cleanly
	Warnings []string // e.g. a truncated last line that was skipped
}

// Reader reads a recording line by line, for recordings too large to hold.
type Reader struct {
	name    string
	sc      *lineio.Scanner
	closer  io.Closer
	line    int
	pending []byte // the line read ahead, to tell a truncated last line from a bad middle one
	keep    bool   // pending holds a line read ahead that scan must return next
	header  Header
	end     *End
	warns   []string
	skipped []string          // lines over maxLine, noted by scan (the producer's own while reading in parallel)
	strs    map[string]string // interned process strings (comm, cmdline, cgroup, unit)
	lastNo  int               // line number of the sample last returned or emitted
	gap     *Gap              // gap lines read since the last sample, for the next one
	order   orderCheck
	dec     *sampleDecoder // Next's sample lines
}

// Open opens a recording (plain or gzip, detected from its first bytes)
// and reads its header.
func Open(path string) (*Reader, error) { return OpenContext(context.Background(), path) }

// OpenContext is [Open] whose reads, the header's and every later one,
// fail with ctx's error once ctx is done (Ctrl-C during a large
// recording ends the read at the next 64 KiB block).
func OpenContext(ctx context.Context, path string) (*Reader, error) {
	// A regular file of at most rootfs.RecordingLimit bytes: a device
	// (/dev/zero) or a FIFO is refused, never read.
	f, err := rootfs.OpenInput(ctx, path, rootfs.RecordingLimit, false)
	if err != nil {
		return nil, err
	}
	r, err := NewReader(f, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.closer = f
	return r, nil
}

// NewReader reads a recording from rd; name is used in messages.
func NewReader(rd io.Reader, name string) (*Reader, error) {
	br := bufio.NewReaderSize(rd, 64<<10)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		br = bufio.NewReaderSize(gz, 64<<10)
	}
	r := &Reader{name: name, sc: lineio.NewScanner(br, maxLine)}
	if !r.scan() {
		if err := r.sc.Err(); err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return nil, fmt.Errorf("%s: %w: empty file (the recorder wrote nothing: killed at once, or a full disk)", name, ErrNoSamples)
	}
	if err := json.Unmarshal(r.pending, &r.header); err != nil || r.header.Format != FormatName {
		first := bytes.Clone(r.pending) // the scan below may reuse its buffer
		if err != nil && bytes.HasPrefix(r.pending, headerPrefix) && !r.scan() {
			// The header is the only line and does not end: the recorder
			// was killed (or the disk filled) while writing it.
			return nil, fmt.Errorf("%s:1: %w: line 1 cut short, the header is incomplete (the recorder was killed or ran out of disk while writing it)", name, ErrNoSamples)
		}
		if v, ok := newerSchema(first); ok {
			// A header of a later memdiag whose fields this one cannot
			// decode (a version past int, a field of another type).
			return nil, fmt.Errorf("%s:1: %w: schema version %s is newer than this memdiag reads (%d); upgrade memdiag",
				name, ErrFormat, v, SchemaVersion)
		}
		return nil, fmt.Errorf("%s:1: %w: the first line is not a memdiag header", name, ErrFormat)
	}
	if r.header.SchemaVersion > SchemaVersion {
		return nil, fmt.Errorf("%s:1: %w: schema version %d is newer than this memdiag reads (%d); upgrade memdiag",
			name, ErrFormat, r.header.SchemaVersion, SchemaVersion)
	}
	r.pending = nil
	return r, nil
}

// newerSchema reports whether line, which did not decode as a Header, is
// still a memdiag header (its format field says so) whose schema_version
// is an integer above SchemaVersion, and returns that version as
// written (at most 32 digits shown).
func newerSchema(line []byte) (string, bool) {
	var h struct {
		Format        string          `json:"format"`
		SchemaVersion json.RawMessage `json:"schema_version"`
	}
	if json.Unmarshal(line, &h) != nil || h.Format != FormatName {
		return "", false
	}
	v := string(h.SchemaVersion)
	if v == "" || strings.Trim(v, "0123456789") != "" {
		return "", false
	}
	v = strings.TrimLeft(v, "0")
	if n, err := strconv.Atoi(v); v == "" || err == nil && n <= SchemaVersion {
		return "", false
	}
	if len(v) > 32 {
		v = v[:32] + "…"
	}
	return v, true
}

func (r *Reader) scan() bool {
	if r.keep { // the line read ahead is still to be handled
		r.keep = false
		return true
	}
	for r.sc.Scan() {
		r.line++
		if n := r.sc.Oversize(); n > 0 {
			r.skipped = append(r.skipped, fmt.Sprintf("%s:%d: line of %d bytes skipped: over the %d MiB a recording line may have (damaged, or not written by memdiag)", r.name, r.line, n, maxLine>>20))
			continue
		}
		b := bytes.TrimSpace(r.sc.Bytes())
		if len(b) == 0 {
			continue
		}
		r.pending = append(r.pending[:0], b...)
		return true
	}
	return false
}

// Header is the recording's header.
func (r *Reader) Header() Header { return r.header }

// End is the end line, once Next has returned io.EOF; nil if the recorder
// did not end cleanly.
func (r *Reader) End() *End { return r.end }

// Warnings lists problems that were tolerated (a truncated last line, a
// line over maxLine).
func (r *Reader) Warnings() []string {
	return append(r.warns[:len(r.warns):len(r.warns)], r.skipped...)
}

// maxLine bounds one line of a recording, in bytes. memdiag writes lines
// of a few KiB to a few MiB (a sample with thousands of processes); a
// longer line is skipped with a warning, like a damaged one, and is never
// held in memory.
const maxLine = 64 << 20

// Next returns the next sample, or io.EOF. A last line that is cut short
// (SIGKILL, power loss, a recorder still writing), a compressed file
// without its trailer, and a damaged line in the middle are skipped with
// a warning naming the line: nothing else recorded is lost.
func (r *Reader) Next() (*Sample, error) {
	for r.scan() {
		lineNo := r.line
		// Fast path: the writer puts "type" first, so a sample line is
		// decoded once instead of once for its type and once for the
		// sample (decoding is most of the time `analyze` takes).
		if bytes.HasPrefix(r.pending, samplePrefix) {
			if r.dec == nil {
				r.dec = newSampleDecoder()
			}
			if s, err := r.dec.decodeSample(r.pending); err == nil {
				r.lastNo = lineNo
				r.takeGap(s)
				return s, nil
			}
			// Let the general path below tell a truncated last line
			// from a bad one.
		}
		var kind struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(r.pending, &kind); err != nil {
			bad := len(r.pending)
			if !r.scan() {
				if err := r.sc.Err(); err != nil {
					return nil, r.endErr(lineNo, err, true)
				}
				r.truncatedLast(lineNo, bad)
				return nil, io.EOF
			}
			// A damaged line in the middle: skip it, keep the rest.
			r.warns = append(r.warns, fmt.Sprintf("%s:%d: damaged line skipped: %v", r.name, lineNo, err))
			r.keep = true
			continue
		}
		switch kind.Type {
		case TypeSample:
			s := new(Sample)
			if err := json.Unmarshal(r.pending, s); err != nil {
				r.warns = append(r.warns, fmt.Sprintf("%s:%d: damaged sample skipped: %v", r.name, lineNo, err))
				continue
			}
			r.lastNo = lineNo
			r.takeGap(s)
			return s, nil
		case TypeGap:
			r.readGap(r.pending, lineNo)
		case TypeHeader:
			r.order.header(lineNo)
		case TypeEnd:
			e := new(End)
			if err := json.Unmarshal(r.pending, e); err != nil {
				return nil, fmt.Errorf("%s:%d: %w: %w", r.name, lineNo, ErrFormat, err)
			}
			r.end = e
		default:
			// Unknown line types from newer minor versions are skipped.
		}
	}
	if err := r.sc.Err(); err != nil {
		return nil, r.endErr(r.line, err, false) // at a line's end: a partial line fails above
	}
	return nil, io.EOF
}

// readGap decodes a gap line (line lineNo) for the next sample; a
// damaged one is skipped with a warning, like a damaged sample.
func (r *Reader) readGap(line []byte, lineNo int) {
	g := new(Gap)
	if err := json.Unmarshal(line, g); err != nil {
		r.warns = append(r.warns, fmt.Sprintf("%s:%d: damaged gap line skipped: %v", r.name, lineNo, err))
		return
	}
	if r.gap == nil {
		r.gap = g
		return
	}
	r.gap.merge(g)
}

// takeGap gives s the gap lines read before it.
func (r *Reader) takeGap(s *Sample) {
	if r.gap != nil {
		s.Gap, r.gap = r.gap, nil
	}
}

var (
	samplePrefix = []byte(`{"type":"sample"`)
	headerPrefix = []byte(`{"type":"header"`)
)

// compact trims what the decoder leaves oversized in a decoded sample,
// for readers that hold a whole recording (ReadFile):
// slices grown by doubling (10 processes get room for 16) are copied to
// their length, and the process strings, which repeat from one sample to
// the next, are shared.
func (r *Reader) compact(s *Sample) {
	if r.strs == nil {
		r.strs = make(map[string]string)
	}
	in := func(p *string) {
		if *p == "" {
			return
		}
		if v, ok := r.strs[*p]; ok {
			*p = v
			return
		}
		if len(r.strs) < 1<<16 { // bound the table on recordings of endless short-lived processes
			r.strs[*p] = *p
		}
	}
	s.Procs = clip(s.Procs)
	for i := range s.Procs {
		p := &s.Procs[i]
		in(&p.Comm)
		in(&p.Cmdline)
		in(&p.Cgroup)
		in(&p.Unit)
	}
	s.RSS = clip(s.RSS)
	for i := range s.RSS {
		in(&s.RSS[i].Comm)
	}
	s.Events = clip(s.Events)
	for i := range s.Events {
		e := &s.Events[i]
		in(&e.Source)
		in(&e.Comm)
		in(&e.Cmdline)
		in(&e.Cgroup)
		in(&e.Unit)
	}
	s.Disks = clip(s.Disks)
	for i := range s.Disks {
		in(&s.Disks[i].Name)
	}
}

// clip returns s with capacity equal to its length (a copy when larger).
func clip[S ~[]E, E any](s S) S {
	if cap(s) == len(s) {
		return s
	}
	return append(S(nil), s...)
}

// endErr is what Next returns when reading stops with err after line
// lineNo. A gzip stream cut short (io.ErrUnexpectedEOF: a .gz recorder
// killed, or a disk that filled, before the stream's end) ends the
// recording with a warning, like a truncated last line of a plain file:
// within line lineNo when partial (a line cut short), else after it
// (every line whole; only the gzip trailer missing, as the writer
// flushes each line).
func (r *Reader) endErr(lineNo int, err error, partial bool) error {
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) && partial:
		r.warns = append(r.warns, fmt.Sprintf("%s:%d: "+warnStreamCut+"; the recorder was probably killed or the disk filled (the sample being written when it stopped is lost)", r.name, lineNo))
		return io.EOF
	case errors.Is(err, io.ErrUnexpectedEOF):
		r.warns = append(r.warns, fmt.Sprintf("%s:%d: "+warnNoTrailer+"; the recorder was probably killed or the disk filled (every line up to here is whole)", r.name, lineNo))
		return io.EOF
	}
	return fmt.Errorf("%s:%d: %w", r.name, lineNo, err)
}

// The reader's warnings about a recording's unfinished end: a last line
// without its end, a compressed stream that stops inside a line, or after
// a whole one without its gzip trailer (IsEndWarning, cutLines).
const (
	warnTruncated = "truncated last line"
	warnStreamCut = "compressed stream cut short at this line"
	warnNoTrailer = "compressed stream ends after this line without its gzip trailer"
)

// truncatedLast warns of a last line (lineNo, size bytes) without its
// end, skipped.
func (r *Reader) truncatedLast(lineNo, size int) {
	r.warns = append(r.warns, fmt.Sprintf("%s:%d: "+warnTruncated+" (%d bytes) skipped; the recorder was probably killed", r.name, lineNo, size))
}

// IsEndWarning reports whether w is one of the reader's warnings about a
// recording's unfinished end (a last line cut short, a compressed stream
// cut short or without its trailer): what a killed recorder, or one still
// writing, leaves — not damage.
func IsEndWarning(w string) bool {
	return strings.Contains(w, warnTruncated) || strings.Contains(w, warnStreamCut) || strings.Contains(w, warnNoTrailer)
}

// Close closes the underlying file, if Open opened it.
func (r *Reader) Close() error {
	if r.closer != nil {
		return r.closer.Close()
	}
	return nil
}

// ReadFile reads a whole recording. Lines are decoded on all cores
// (GOMAXPROCS) in batches and kept in file order; decoding JSON is most
// of what `memdiag analyze` spends on a long recording. Warnings and
// errors are those of reading it with Next.
func ReadFile(path string) (*Recording, error) {
	var samples []Sample
	rec, err := readEach(path, func(r *Reader, s *Sample) {
		r.compact(s)
		samples = append(samples, *s)
	})
	if err != nil {
		return nil, err
	}
	rec.Samples = samples
	return rec, nil
}

// ReadAll reads a whole recording from r, named name in messages (a
// file already open, or stdin), as [Reader.Each] reads it.
func ReadAll(r io.Reader, name string) (*Recording, error) {
	rd, err := NewReader(r, name)
	if err != nil {
		return nil, err
	}
	var samples []Sample
	rec, err := rd.Each(func(s *Sample) { samples = append(samples, *s) })
	if err != nil {
		return nil, err
	}
	rec.Samples = samples
	return rec, nil
}

// ReadEach reads a recording like ReadFile but hands each sample to fn,
// in file order, instead of keeping it; see [Reader.Each].
func ReadEach(path string, fn func(*Sample)) (*Recording, error) {
	r, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.Each(fn)
}

// Each reads the rest of the recording like ReadFile, decoding lines on
// all cores, but hands each sample to fn, in file order, instead of
// keeping it: for readers that reduce a long recording as it is read
// (`memdiag analyze` of a day). fn owns the sample it is given. The
// Recording returned has the header, the end line and the warnings, and
// no Samples.
func (r *Reader) Each(fn func(*Sample)) (*Recording, error) {
	return r.each(func(_ *Reader, s *Sample) { fn(s) })
}

func readEach(path string, fn func(*Reader, *Sample)) (*Recording, error) {
	r, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.each(fn)
}

func (r *Reader) each(fn func(*Reader, *Sample)) (*Recording, error) {
	rec := &Recording{Header: r.Header()}
	emit := func(s *Sample) {
		r.order.sample(r.lastNo, s)
		fn(r, s)
	}
	workers := min(runtime.GOMAXPROCS(0), 8)
	if workers < 2 {
		for {
			s, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, err
			}
			emit(s)
		}
	} else if err := r.readParallel(emit, workers); err != nil {
		return nil, err
	}
	rec.End, rec.Warnings = r.End(), append(r.Warnings(), r.order.warnings(r.name)...)
	return rec, nil
}

// lineBatch is a run of consecutive lines decoded by one worker.
type lineBatch struct {
	lines   [][]byte
	arena   []byte    // the lines' bytes, one after another; reused (arenas) once the batch is handed on
	bytes   int64     // the lines' length, acquired from the in-flight budget
	nums    []int     // line numbers
	samples []*Sample // decoded by the fast path; nil where the line needs the general path
	done    chan struct{}
}

// A batch holds at most batchLines lines and, past its first line, at
// most batchBytes bytes; all batches in flight (read, being decoded, or
// waiting to be handed on in order) hold at most inFlightBytes of lines,
// or one line when that line alone is larger. With maxLine that bounds
// what reading holds, whatever the input: about 2×maxLine for the line
// being read and its copy, plus inFlightBytes (or one maxLine line) and
// what those lines decode to.
// arenas are the line arenas of the batches handed on, for the next
// ones: reading a day's recording copied each of its 86,400 lines into
// an allocation of its own (536 MB in all, issue 32).
var arenas arenaPool

type arenaPool struct{ p sync.Pool }

func (a *arenaPool) get() []byte {
	if b, ok := a.p.Get().(*[]byte); ok {
		return (*b)[:0]
	}
	return make([]byte, 0, batchBytes+batchBytes/4)
}

// put keeps b for a later get unless it grew for an oversize line.
func (a *arenaPool) put(b []byte) {
	if b != nil && cap(b) <= 2*batchBytes {
		a.p.Put(&b)
	}
}

const (
	batchLines    = 256
	batchBytes    = 256 << 10
	inFlightBytes = 32 << 20
)

// readParallel reads the rest of the recording with workers goroutines
// decoding it and hands each sample to emit in file order. Three stages
// joined by a [batchPipe]: the producer ([Reader.produceBatches]) reads
// lines into batches, the decoders ([decodeBatches]) decode the sample
// lines of each, and this goroutine ([Reader.consumeBatch]) takes the
// batches in order and handles what the decoders left. It ends with
// [Reader.finishParallel]'s verdict on the last lines.
func (r *Reader) readParallel(emit func(*Sample), workers int) error {
	p := &batchPipe{
		jobs:   make(chan *lineBatch, workers),
		order:  make(chan *lineBatch, 2*workers),
		stop:   make(chan struct{}),
		budget: semaphore.NewWeighted(inFlightBytes),
	}
	var cancel context.CancelFunc
	p.ctx, cancel = context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() {
		// Stop the producer before waiting: a consumer that returns early
		// (a damaged end line) leaves it blocked sending, and the
		// decoders wait for it to close jobs.
		close(p.stop)
		cancel()
		wg.Wait()
	}()
	for range workers {
		wg.Go(func() { decodeBatches(p.jobs) })
	}
	var scanErr error
	var lastLine int
	wg.Go(func() { // the producer: r.sc and r.line are its own until order is closed
		defer close(p.order)
		defer close(p.jobs)
		lastLine, scanErr = r.produceBatches(p)
	})

	var bad heldLine
	for b := range p.order {
		if err := r.consumeBatch(b, emit, &bad); err != nil {
			return err
		}
		// Nothing decoded refers to the lines (the decoder copies what it
		// keeps), so their arena serves another batch.
		arenas.put(b.arena)
		b.lines, b.samples, b.arena = nil, nil, nil
		p.budget.Release(b.bytes)
	}
	// order is closed: the producer is done with scanErr and lastLine.
	return r.finishParallel(bad, scanErr, lastLine)
}

// batchPipe joins the stages of [Reader.readParallel].
type batchPipe struct {
	jobs   chan *lineBatch     // batches for the decoders
	order  chan *lineBatch     // the same batches for the consumer, in file order
	stop   chan struct{}       // closed when the consumer returns
	budget *semaphore.Weighted // bytes of lines in flight, at most inFlightBytes
	ctx    context.Context     // cancelled when the consumer returns
}

// wait waits until n bytes of lines fit in the budget and takes them;
// false once the consumer has returned.
func (p *batchPipe) wait(n int64) bool { return p.budget.Acquire(p.ctx, n) == nil }

// send hands b to the consumer (first, so order keeps file order) and to
// a decoder; false once the consumer has returned.
func (p *batchPipe) send(b *lineBatch) bool {
	select {
	case p.order <- b:
	case <-p.stop:
		return false
	}
	select {
	case p.jobs <- b:
	case <-p.stop:
		return false
	}
	return true
}

// newLineBatch is an empty batch.
func newLineBatch() *lineBatch { return &lineBatch{done: make(chan struct{})} }

// add copies line into the batch's arena as line number lineNo; n is
// the bytes it takes from the in-flight budget.
func (b *lineBatch) add(line []byte, n int64, lineNo int) {
	if b.arena == nil {
		b.arena = arenas.get()
	}
	from := len(b.arena)
	b.arena = append(b.arena, line...)
	b.lines = append(b.lines, b.arena[from:len(b.arena):len(b.arena)])
	b.bytes += n
	b.nums = append(b.nums, lineNo)
}

// produceBatches reads the rest of the file into batches of at most
// batchLines lines and batchBytes bytes and sends them on p. A line that
// would take the lines in flight past inFlightBytes first sends what the
// batch holds, then waits for room. It returns the last line number
// read and the scanner's error; 0 and nil when the consumer stopped it.
func (r *Reader) produceBatches(p *batchPipe) (lastLine int, scanErr error) {
	b := newLineBatch()
	for r.scan() {
		n := min(int64(len(r.pending)), inFlightBytes)
		if n > 0 && !p.budget.TryAcquire(n) {
			// Hand on what is held before waiting for room.
			if len(b.lines) > 0 {
				if !p.send(b) {
					return 0, nil
				}
				b = newLineBatch()
			}
			if !p.wait(n) {
				return 0, nil
			}
		}
		b.add(r.pending, n, r.line)
		if len(b.lines) == batchLines || b.bytes >= batchBytes {
			if !p.send(b) {
				return 0, nil
			}
			b = newLineBatch()
		}
	}
	if len(b.lines) > 0 {
		p.send(b)
	}
	return r.line, r.sc.Err()
}

// decodeBatches decodes, for each batch from jobs, the lines that start
// as a sample line does (samplePrefix) into b.samples, with a
// [sampleDecoder] of its own; a line that does not decode is left nil
// for the consumer's general path. It closes each batch's done.
func decodeBatches(jobs <-chan *lineBatch) {
	d := newSampleDecoder()
	for b := range jobs {
		b.samples = make([]*Sample, len(b.lines))
		for i, l := range b.lines {
			if !bytes.HasPrefix(l, samplePrefix) {
				continue
			}
			if s, err := d.decodeSample(l); err == nil {
				b.samples[i] = s
			}
		}
		close(b.done)
	}
}

// heldLine is a line that is not JSON, held until the next line shows
// whether it was damaged (another line follows) or the truncated last
// line; line 0 holds none.
type heldLine struct {
	line, size int // line number; length in bytes
	err        error
}

// consumeBatch waits for b's decoding, then handles its lines in order:
// a line held in bad is warned about as damaged, a decoded sample is
// emitted, a line that is not JSON is held in bad, and any other line
// goes to [Reader.parallelLine]. The error is a damaged end line's.
func (r *Reader) consumeBatch(b *lineBatch, emit func(*Sample), bad *heldLine) error {
	<-b.done
	for i, l := range b.lines {
		if bad.line > 0 {
			r.warns = append(r.warns, fmt.Sprintf("%s:%d: damaged line skipped: %v", r.name, bad.line, bad.err))
			bad.line = 0
		}
		if s := b.samples[i]; s != nil {
			r.lastNo = b.nums[i]
			r.takeGap(s)
			emit(s)
			continue
		}
		var kind struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(l, &kind); err != nil {
			*bad = heldLine{line: b.nums[i], size: len(l), err: err}
			continue
		}
		if err := r.parallelLine(kind.Type, l, b.nums[i], emit); err != nil {
			return err
		}
	}
	return nil
}

// parallelLine handles line lineNo, of type typ, that the decoders did
// not decode as a sample: a sample that does not decode is skipped with
// a warning; a gap line is kept for the next sample; a header line is
// checked for order; an end line is kept, or is an [ErrFormat] error
// when it does not decode.
func (r *Reader) parallelLine(typ string, l []byte, lineNo int, emit func(*Sample)) error {
	switch typ {
	case TypeSample:
		s := new(Sample)
		if err := json.Unmarshal(l, s); err != nil {
			r.warns = append(r.warns, fmt.Sprintf("%s:%d: damaged sample skipped: %v", r.name, lineNo, err))
			return nil
		}
		r.lastNo = lineNo
		r.takeGap(s)
		emit(s)
	case TypeGap:
		r.readGap(l, lineNo)
	case TypeHeader:
		r.order.header(lineNo)
	case TypeEnd:
		e := new(End)
		if err := json.Unmarshal(l, e); err != nil {
			return fmt.Errorf("%s:%d: %w: %w", r.name, lineNo, ErrFormat, err)
		}
		r.end = e
	}
	return nil
}

// finishParallel ends a parallel read once the producer is done: a line
// still held in bad was the last, so it is a truncated last line (a
// warning) unless reading stopped with scanErr; scanErr after lastLine
// goes through [Reader.endErr] (a gzip stream cut short is a warning).
func (r *Reader) finishParallel(bad heldLine, scanErr error, lastLine int) error {
	switch {
	case bad.line > 0 && scanErr != nil:
		if err := r.endErr(bad.line, scanErr, true); !errors.Is(err, io.EOF) {
			return err
		}
	case bad.line > 0:
		r.truncatedLast(bad.line, bad.size)
	case scanErr != nil:
		if err := r.endErr(lastLine, scanErr, false); !errors.Is(err, io.EOF) {
			return err
		}
	}
	return nil
}
