package latency

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"

	"context"
	"github.com/memdiag/memdiag/internal/lineio"
	"github.com/memdiag/memdiag/internal/rootfs"
)

// ErrParse is wrapped by every bad-row error ([LineError.Err]).
var ErrParse = errors.New("malformed row")

// ErrFormat is returned when the format of a results file cannot be
// detected or a forced format name is unknown.
var ErrFormat = errors.New("unknown latency format")

// Format names accepted by [ImportOptions.Format] and returned by [detect].
const (
	formatVegetaCSV  = "vegeta-csv"  // vegeta encode --to csv
	formatVegetaJSON = "vegeta-json" // vegeta encode --to json
	formatJMeter     = "jmeter"      // JMeter JTL CSV, with or without header
	formatK6JSON     = "k6-json"     // k6 run --out json=FILE
	formatK6CSV      = "k6-csv"      // k6 run --out csv=FILE
	formatLocust     = "locust"      // locust --csv PREFIX: PREFIX_stats_history.csv
	formatHey        = "hey"         // hey -o csv
	formatGeneric    = "generic"     // timestamp,latency[,status] CSV
	formatAB         = "ab"          // ab -g FILE (gnuplot TSV)
	formatJMeterXML  = "jmeter-xml"  // JMeter JTL, XML form
	formatGatling    = "gatling"     // Gatling 3.0-3.12 simulation.log (text)
)

// Formats lists the format names.
var Formats = []string{formatVegetaCSV, formatVegetaJSON, formatJMeter, formatK6JSON, formatK6CSV, formatLocust, formatHey, formatGeneric, formatAB, formatJMeterXML, formatGatling}

// maxBadLines bounds ImportReport.BadLines; Bad still counts every bad row.
const maxBadLines = 1000

// ImportOptions configures [Import], [ImportFile] and [Follow].
type ImportOptions struct {
	// Format forces a format by name (one of [Formats]); "" detects it
	// from the content (see detect).
	Format string
	// Location is the time zone of timestamps written without one
	// ("2026/11/29 21:42:53.033", JMeter's timestamp_format). Nil makes
	// such rows bad: memdiag never guesses a zone.
	Location *time.Location
	// LatencyUnit is the unit of bare latency numbers in a generic CSV
	// whose header names no unit. 0 makes such rows bad.
	LatencyUnit time.Duration
	// Start is the start of the test for formats that only record offsets
	// from it (hey). When zero, [Import] returns start times counted from
	// the Unix epoch and sets ImportReport.Relative, [ImportFile] derives
	// it from the file's modification time, and [Follow] refuses the file
	// ([ErrRelative]).
	Start time.Time
	// JMeter gives the columns, delimiter and timestamp format of a
	// header-less JMeter CSV (--latency-columns, --latency-properties);
	// with it, a file not detected as JMeter's XML is read as JMeter CSV.
	JMeter *JMeterSave
}

// LineError is one bad row: its file, 1-based line number, text (cut to
// 200 bytes) and why.
type LineError struct {
	File string
	Line int
	Text string
	Err  error
}

// Error reads "file:line: why: text", the form editors jump to.
func (e LineError) Error() string {
	return fmt.Sprintf("%s:%d: %v: %q", e.File, e.Line, e.Err, e.Text)
}

func (e LineError) Unwrap() error { return e.Err }

// ImportReport says what an import read. Bad rows are counted and listed
// with their line numbers; they never abort the import.
type ImportReport struct {
	// AB is what ab's standard output counted (--latency-ab-output), nil
	// when not given; ABName its file name. ab -g rows carry no status,
	// so only these totals say how many failed (issue 30.11).
	AB       *ABSummary
	ABName   string
	Name     string      // file name, for messages
	Format   string      // format used (detected or forced)
	Rows     int         // rows imported (requests or interval rows)
	Bad      int         // rows that could not be parsed
	BadLines []LineError // the first 1000 bad rows
	// Skipped counts well-formed rows that carry no request latency:
	// other k6 metrics, k6 metric declarations.
	Skipped int
	// Transactions counts JMeter Transaction Controller rows, excluded:
	// each repeats the time and errors of the samples inside it.
	Transactions int
	// Resolution is the resolution of the file's timestamps when it is
	// coarser than a millisecond (k6 CSV's whole seconds: 1 s); 0 else.
	Resolution time.Duration
	// Truncated is the line number of an unterminated last line (a writer
	// still writing or killed mid-line); 0 if none. Such a line is not
	// imported and not counted in Bad: every tool ends its lines, and a cut
	// line can parse to wrong values ("…,335,40" for "…,335,404 File not
	// found"). Only a generic CSV's unterminated last line is imported,
	// when it parses, since hand-made files often lack the final newline.
	Truncated int
	// Relative is set when the format records only offsets from the start
	// of the test (hey) and no start was known: start times then count
	// from 1970-01-01 UTC and must be shifted by the caller.
	Relative bool
	// StartAt is the start a relative format was anchored at.
	StartAt time.Time
	// Window is set by [Imported.Within]: what fell inside a recording.
	Window *Window
	// StartFrom says where the start of a relative format came from
	// ("option", [StartCommand], [StartMtime]), "" for absolute formats.
	StartFrom string
	// Columns says where a JMeter CSV's columns came from when
	// ImportOptions.JMeter was given, and which they are.
	Columns string
}

// Err returns nil when every row parsed, else an error with the count and
// the first bad line ("2 of 12 rows bad, first at results.csv:5: …").
func (r *ImportReport) Err() error {
	if r.Bad == 0 {
		return nil
	}
	return fmt.Errorf("%d of %d rows bad, first at %w", r.Bad, r.Rows+r.Bad, r.BadLines[0])
}

func (r *ImportReport) bad(e LineError) {
	r.Bad++
	if len(r.BadLines) < maxBadLines {
		r.BadLines = append(r.BadLines, e)
	}
}

// Where the start of a relative format (hey) came from: ImportReport.StartFrom.
const (
	StartOption  = "option"                                                    // ImportOptions.Start as given (--latency-start)
	StartCommand = "the start of the wrapped command (recorded by watch)"      // Record.Header.CommandStart
	StartMtime   = "the file's modification time minus its last request's end" // ImportFile's fallback
)

// Imported is the content of a results file.
type Imported struct {
	Requests  Requests       // one per request, in file order
	Intervals []IntervalStat // per-interval rows, only from formats without per-request rows (Locust)
	Report    ImportReport
}

// Import reads a whole results file from r. name is used in messages. The
// format is opts.Format or, if empty, detected from the first line with
// [detect]. Bad rows are reported in Imported.Report; the error is non-nil
// only when the format is unknown or r fails.
func Import(r io.Reader, name string, opts ImportOptions) (*Imported, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		// A gzipped results file (results.csv.gz), any format.
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		defer zr.Close()
		br = bufio.NewReaderSize(zr, 64<<10)
	}
	format := opts.Format
	if format == "" {
		head, err := br.Peek(8 << 10)
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, bufio.ErrBufferFull) {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if format, err = detectFor(head, opts); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	imp := &Imported{}
	d, err := newDecoder(name, format, opts, &imp.Report)
	if err != nil {
		return nil, err
	}
	emit := func(x row) {
		if x.iv != nil {
			imp.Intervals = append(imp.Intervals, *x.iv)
		} else {
			imp.Requests.Append(x.req)
		}
	}
	// Lines are bounded (maxLine): a longer one is a bad row, read past
	// without being held.
	sc := lineio.NewScanner(br, maxLine)
	for sc.Scan() {
		switch {
		case sc.Oversize() > 0:
			d.oversize(sc.Oversize())
		case sc.Terminated():
			d.line(string(sc.Bytes()), emit)
		case len(sc.Bytes()) > 0:
			d.last(string(sc.Bytes()), emit)
		}
	}
	if err := sc.Err(); errors.Is(err, io.ErrUnexpectedEOF) {
		// A gzip stream cut short (a writer killed): what came
		// before is kept, the end is noted as cut.
		imp.Report.Truncated = d.n + 1
	} else if err != nil {
		return imp, fmt.Errorf("%s: %w", name, err)
	}
	d.flush(emit)
	return imp, nil
}

// ImportFile opens and imports path (see [Import]). For formats that record
// only offsets (hey) and a zero opts.Start, the start of the test is taken
// as the file's modification time minus the end of its last request, and
// Report.StartFrom is [StartMtime].
func ImportFile(path string, opts ImportOptions) (*Imported, error) {
	return ImportFileContext(context.Background(), path, opts)
}

// ImportFileContext is [ImportFile] whose reads fail with ctx's error
// once ctx is done (Ctrl-C while a large results file is read).
func ImportFileContext(ctx context.Context, path string, opts ImportOptions) (*Imported, error) {
	// A regular file of at most rootfs.LatencyLimit bytes: a device
	// (/dev/zero), socket or FIFO is refused, never read (a pipe comes
	// through standard input, "-", which the caller reads with Import).
	f, err := rootfs.OpenInput(ctx, path, rootfs.LatencyLimit, false)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	imp, err := Import(f, path, opts)
	if err != nil || !imp.Report.Relative {
		return imp, err
	}
	st, err := f.Stat()
	if err != nil {
		return imp, err
	}
	var last time.Time
	for _, q := range imp.Requests.Each() {
		if e := q.Start.Add(q.Latency); e.After(last) {
			last = e
		}
	}
	imp.Shift(st.ModTime().Sub(last))
	imp.Report.Relative = false
	imp.Report.StartFrom = StartMtime
	return imp, nil
}

// Shift moves every request (and interval row) by d, and Report.StartAt
// with them: for re-anchoring a relative format.
func (imp *Imported) Shift(d time.Duration) {
	for i, q := range imp.Requests.Each() {
		q.Start = q.Start.Add(d)
		imp.Requests.set(i, q)
	}
	for i := range imp.Intervals {
		imp.Intervals[i].End = imp.Intervals[i].End.Add(d)
	}
	imp.Report.StartAt = imp.Report.StartAt.Add(d)
}

// row is what a parser makes of one record.
type row struct {
	req Request
	iv  *IntervalStat
}

// parser parses the records of one format. parse returns ok=false for a
// record that is well formed but carries no row (a header, another k6
// metric); skip reports whether such a record counts as Skipped.
type parser interface {
	parse(rec string) (r row, ok, skip bool, err error)
}

// csvParser marks parsers whose records may span lines inside quotes.
type csvParser interface{ multiline() }

func newParser(format string, opts ImportOptions) (parser, error) {
	switch format {
	case formatVegetaCSV:
		return &vegetaCSV{}, nil
	case formatVegetaJSON:
		return &vegetaJSON{}, nil
	case formatJMeter:
		return &jmeter{loc: opts.Location, save: opts.JMeter}, nil
	case formatK6JSON:
		return &k6JSON{}, nil
	case formatK6CSV:
		return &k6CSV{loc: opts.Location}, nil
	case formatLocust:
		return &locust{prev: map[string]locustTotals{}}, nil
	case formatHey:
		return &hey{start: opts.Start}, nil
	case formatGeneric:
		return &generic{loc: opts.Location, unit: opts.LatencyUnit}, nil
	case formatAB:
		return &ab{}, nil
	case formatJMeterXML:
		return &jmeterXML{}, nil
	case formatGatling:
		return gatling{}, nil
	}
	return nil, fmt.Errorf("%w %q (known: %s)", ErrFormat, format, strings.Join(Formats, ", "))
}

// maxRecordLines bounds a quoted CSV record spanning lines: a stray quote
// must not swallow the rest of a file into one bad row.
const maxRecordLines = 64

// decoder feeds complete lines to a parser, joins quoted CSV records that
// span lines, and keeps the report.
type decoder struct {
	p      parser
	format string
	multi  bool
	rep    *ImportReport
	n      int             // lines seen
	pend   []pendLine      // lines of a quoted record still open
	onBad  func(LineError) // called for each bad row, if set
}

type pendLine struct {
	n int
	s string
}

func newDecoder(name, format string, opts ImportOptions, rep *ImportReport) (*decoder, error) {
	p, err := newParser(format, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	rep.Name, rep.Format = name, format
	if format == formatHey {
		rep.StartAt = opts.Start
		if opts.Start.IsZero() {
			rep.Relative = true
			rep.StartAt = time.Unix(0, 0).UTC()
		} else {
			rep.StartFrom = StartOption
		}
	}
	switch p := p.(type) {
	case *k6CSV:
		p.rep = rep
	case *jmeter:
		p.rep = rep
	case *ab:
		p.rep = rep
	case *jmeterXML:
		p.rep = rep
	}
	_, multi := p.(csvParser)
	return &decoder{p: p, format: format, multi: multi, rep: rep}, nil
}

// line handles one complete line (without its "\n").
func (d *decoder) line(s string, emit func(row)) {
	d.n++
	s = strings.TrimSuffix(s, "\r")
	if d.n == 1 {
		s = strings.TrimPrefix(s, "\ufeff")
	}
	d.feed(d.n, s, emit)
}

func (d *decoder) feed(n int, s string, emit func(row)) {
	if !d.multi {
		d.record(n, s, emit)
		return
	}
	odd := strings.Count(s, `"`)%2 == 1
	switch {
	case len(d.pend) > 0 && odd: // the quote closes
		var b strings.Builder
		for _, l := range d.pend {
			b.WriteString(l.s)
			b.WriteString("\n")
		}
		b.WriteString(s)
		first := d.pend[0].n
		d.pend = d.pend[:0]
		d.record(first, b.String(), emit)
	case len(d.pend) > 0:
		d.pend = append(d.pend, pendLine{n, s})
		if len(d.pend) > maxRecordLines {
			d.unclosed(emit)
		}
	case odd:
		d.pend = append(d.pend, pendLine{n, s})
	default:
		d.record(n, s, emit)
	}
}

// unclosed reports the first pending line as bad (its quote never closed)
// and parses the lines after it on their own.
func (d *decoder) unclosed(emit func(row)) {
	if len(d.pend) == 0 {
		return
	}
	rest := slices.Clone(d.pend[1:])
	first := d.pend[0]
	d.pend = d.pend[:0]
	d.badRow(first.n, first.s, fmt.Errorf("%w: quote not closed within %d lines or by the end", ErrParse, maxRecordLines))
	for _, l := range rest {
		d.feed(l.n, l.s, emit)
	}
}

// last handles an unterminated last line: noted in Report.Truncated, or
// for a generic CSV imported if it parses.
func (d *decoder) last(s string, emit func(row)) {
	d.unclosed(emit)
	d.n++
	s = strings.TrimSuffix(s, "\r")
	if strings.TrimSpace(s) == "" {
		return
	}
	if d.format != formatGeneric || (d.multi && strings.Count(s, `"`)%2 == 1) {
		d.rep.Truncated = d.n
		return
	}
	r, ok, skip, err := d.p.parse(s)
	switch {
	case err != nil:
		d.rep.Truncated = d.n
	case ok:
		d.rep.Rows++
		emit(r)
	case skip:
		d.rep.Skipped++
	}
}

// maxLine bounds one line of a results file, in bytes: a row of any
// format is well under 1 KiB (a k6 JSON point a few hundred bytes); a
// longer line is a bad row, skipped without being held in memory.
const maxLine = 1 << 20

// ErrLineTooLong is the error of a line over maxLine.
var ErrLineTooLong = errors.New("line too long")

// oversize counts a line of size bytes that was over maxLine.
func (d *decoder) oversize(size int64) {
	d.n++
	d.badRow(d.n, fmt.Sprintf("(%d bytes, over the %d MiB a line may have)", size, maxLine>>20), ErrLineTooLong)
}

// flush ends the input: a quote still open is a bad row.
func (d *decoder) flush(emit func(row)) { d.unclosed(emit) }

func (d *decoder) badRow(n int, s string, err error) {
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	e := LineError{File: d.rep.Name, Line: n, Text: s, Err: err}
	d.rep.bad(e)
	if d.onBad != nil {
		d.onBad(e)
	}
}

func (d *decoder) record(n int, s string, emit func(row)) {
	if strings.TrimSpace(s) == "" {
		return
	}
	r, ok, skip, err := d.p.parse(s)
	switch {
	case err != nil:
		d.badRow(n, s, err)
	case ok:
		d.rep.Rows++
		emit(r)
	case skip:
		d.rep.Skipped++
	}
}

// detect names the format of a results file from its first bytes (the
// first line is enough; pass a few KiB). It recognises:
//
//   - vegeta-json: JSON lines with "timestamp", "latency" and "code";
//   - k6-json: JSON lines with "type":"Point" or "type":"Metric" and "metric";
//   - hey: the header "response-time,DNS+dialup,…";
//   - locust: the header "Timestamp,User Count,Type,Name,…";
//   - k6-csv: the header "metric_name,timestamp,metric_value,…";
//   - jmeter: a header with "timeStamp" and "elapsed", or a header-less row
//     whose columns 1, 2, 4 and 8 are epoch ms, elapsed ms, a response
//     code and true/false (JMeter's default column order);
//   - vegeta-csv: a header-less row of epoch ns, code, latency ns, … with
//     at least 7 columns;
//   - generic: a header naming a time and a latency column, or a
//     header-less row of a timestamp and a latency with a unit ("12.5ms").
//
// Binary content (vegeta's default gob output) is an error that says to run
// "vegeta encode".
func detect(head []byte) (string, error) {
	head = bytes.TrimPrefix(head, []byte("\ufeff"))
	if bytes.HasPrefix(head, []byte{0x1f, 0x8b}) {
		return "", fmt.Errorf("%w: gzip-compressed (analyze and compare read it; watch --latency cannot follow a file compressed as it is written)", ErrFormat)
	}
	if !isText(head) {
		return "", fmt.Errorf("%w: binary content (vegeta's default output? run: vegeta encode --to csv)", ErrFormat)
	}
	var first string
	for _, l := range strings.Split(string(head), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			first = l
			break
		}
	}
	if first == "" {
		return "", fmt.Errorf("%w: empty", ErrFormat)
	}
	if hint := summaryHint(first, head); hint != "" {
		return "", fmt.Errorf("%w: %s", ErrFormat, hint)
	}
	if (strings.HasPrefix(first, "<?xml") || strings.HasPrefix(first, "<testResults")) && bytes.Contains(head, []byte("<testResults")) {
		return formatJMeterXML, nil
	}
	if strings.HasPrefix(first, "{") {
		switch {
		case strings.Contains(first, `"metric"`) && (strings.Contains(first, `"type":"Point"`) || strings.Contains(first, `"type":"Metric"`)):
			return formatK6JSON, nil
		case strings.Contains(first, `"latency"`) && strings.Contains(first, `"code"`) && strings.Contains(first, `"timestamp"`):
			return formatVegetaJSON, nil
		}
		return "", fmt.Errorf("%w: JSON lines that are neither vegeta nor k6: %.80q", ErrFormat, first)
	}
	switch {
	case strings.HasPrefix(first, "response-time,DNS+dialup"):
		return formatHey, nil
	case strings.HasPrefix(first, "Timestamp,User Count,Type,Name"), strings.HasPrefix(first, `"Timestamp","User Count","Type","Name"`):
		return formatLocust, nil
	case strings.HasPrefix(first, "metric_name,timestamp,metric_value"):
		return formatK6CSV, nil
	case strings.HasPrefix(first, "starttime\tseconds\tctime\tdtime\tttime"):
		return formatAB, nil
	case gatlingRecord(first):
		return formatGatling, nil
	}
	if hint := summaryHint(first, head); hint != "" {
		return "", fmt.Errorf("%w: %s", ErrFormat, hint)
	}
	f := splitLoose(first)
	if slices.Contains(f, "timeStamp") && slices.Contains(f, "elapsed") {
		return formatJMeter, nil
	}
	if jmeterRow(f) {
		return formatJMeter, nil
	}
	if vegetaRow(f) {
		return formatVegetaCSV, nil
	}
	if _, _, ok := genericHeader(f); ok {
		return formatGeneric, nil
	}
	if len(f) >= 2 && len(f) <= 4 {
		if _, err := parseTime(f[0], time.UTC); err == nil {
			if _, err := parseLatency(f[1], 0); err == nil {
				return formatGeneric, nil
			}
		}
	}
	return "", fmt.Errorf("%w: first line %.80q", ErrFormat, first)
}

// detectFor is [detect], except that a file read with JMeter save
// settings is JMeter's CSV unless it is JMeter's XML.
func detectFor(head []byte, opts ImportOptions) (string, error) {
	f, err := detect(head)
	if opts.JMeter != nil && f != formatJMeterXML {
		return formatJMeter, nil
	}
	return f, err
}

// isText reports whether b has no control bytes but tab, CR and LF.
// Bytes ≥ 0x80 are allowed: a JTL may be Latin-1.
func isText(b []byte) bool {
	for _, c := range b {
		if c < 0x20 && c != '\n' && c != '\r' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// splitLoose splits a first line on tabs or commas without CSV quoting
// rules, trimming quotes, for detection only.
func splitLoose(s string) []string {
	f := strings.Split(s, string(jmeterSep(s)))
	for i := range f {
		f[i] = strings.Trim(strings.TrimSpace(f[i]), `"`)
	}
	return f
}

// gatlingRecord reports whether line is a record of Gatling's text
// simulation.log (it starts with ASSERTION records, then RUN).
func gatlingRecord(line string) bool {
	for _, h := range []string{"RUN\t", "ASSERTION\t", "REQUEST\t", "USER\t", "GROUP\t"} {
		if strings.HasPrefix(line, h) {
			return true
		}
	}
	return false
}

func jmeterRow(f []string) bool {
	if len(f) < 8 || !isDigits(f[0]) || len(f[0]) != 13 || !isDigits(f[1]) {
		return false
	}
	return f[7] == "true" || f[7] == "false"
}

func vegetaRow(f []string) bool {
	return len(f) >= 7 && isDigits(f[0]) && len(f[0]) >= 18 && isDigits(f[1]) && isDigits(f[2])
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// summaryHint recognises the end-of-run summaries that load tools write
// beside (or instead of) their per-request results, and says which file
// to give instead; "" when head is not one of them.
func summaryHint(first string, head []byte) string {
	h := string(head)
	switch {
	case strings.HasPrefix(first, "{") && strings.Contains(h, `"root_group"`) && strings.Contains(h, `"metrics"`):
		return "this is k6's end-of-test summary (--summary-export), totals only; give its per-request output: k6 run --out json=FILE (or --out csv=FILE)"
	case strings.HasPrefix(first, "{") && strings.Contains(h, `"latencies"`) && strings.Contains(h, `"requests"`) && strings.Contains(h, `"status_codes"`):
		return "this is a vegeta report (vegeta report -type=json), totals only; give the per-request results: vegeta encode --to csv < results.bin > results.csv"
	case strings.HasPrefix(first, "Type,Name,Request Count,Failure Count"), strings.HasPrefix(first, `"Type","Name","Request Count","Failure Count"`):
		return "this is Locust's totals file (PREFIX_stats.csv); give PREFIX_stats_history.csv (run with --csv-full-history) or, exactly, the per-request rows of the request hook in docs/latency.md"
	case strings.HasPrefix(first, "Summary:") || strings.Contains(h, "Response time histogram:"):
		return "this is hey's text summary; run hey with -o csv and give that output"
	case strings.HasPrefix(first, "This is ApacheBench"):
		return "this is ab's text summary; run ab with -g FILE and give FILE"
	}
	return ""
}
