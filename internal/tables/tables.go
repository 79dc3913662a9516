// Package tables draws memdiag's text tables, in one style for every
// command, with github.com/jedib0t/go-pretty/v6/table doing the drawing.
//
// On a terminal a table fits the terminal's width: the columns marked
// [Wrap] (descriptions, notes) are wrapped at spaces and the columns
// marked [Truncate] (command lines) are cut with "…", widest first, until
// the table fits. Piped output (width 0) keeps every character, so that
// grep and diff see the whole content. Rows are not separated by lines:
// a row that spans several lines is recognised by its first cell, which
// only its first line has.
package tables

import (
	"fmt"
	"strings"

	"github.com/jedib0t/go-pretty/v6/table"
	"github.com/jedib0t/go-pretty/v6/text"
)

// Fit says how a column gives way when the table is wider than the
// terminal.
type Fit int

const (
	// Keep never narrows the column (times, sizes, names).
	Keep Fit = iota
	// Wrap wraps the column's text at spaces onto more lines
	// (descriptions, notes), breaking words only when a word alone is
	// wider than the column.
	Wrap
	// Truncate cuts each line of the column to the width, ending it in
	// "…" (command lines, paths).
	Truncate
)

// minWidth is the narrowest a Wrap or Truncate column becomes, in
// terminal columns, unless [Table.SetFit] or its header says wider.
const minWidth = 12

type fit struct {
	how Fit
	min int // terminal columns
}

// Options decide how [Table.Text] draws.
type Options struct {
	// Width is the terminal's width in columns; 0 means no limit (stdout
	// is not a terminal, keep full content).
	Width int
	// Color makes the header bold (the caller has decided: a terminal,
	// no NO_COLOR, no --no-color).
	Color bool
}

// Table collects a header and rows, then draws them as text, Markdown or
// CSV.
type Table struct {
	header table.Row
	rows   []table.Row
	fits   map[int]fit
	hide   []int // columns a too-narrow terminal hides, first one first
}

// New returns a table with the given column titles.
func New(header ...any) *Table {
	return &Table{header: table.Row(header), fits: map[int]fit{}}
}

// SetFit sets how column col (0-based) gives way on a narrow terminal,
// and the narrowest it may become in terminal columns (at least 12 and
// its header's width); a column not set is [Keep].
func (t *Table) SetFit(col int, f Fit, minCols int) *Table {
	t.fits[col] = fit{f, max(minCols, minWidth)}
	return t
}

// HideWhenNarrow lists columns (0-based) that a terminal too narrow for
// the table even after wrapping and truncating hides, the first listed
// first, one at a time until the table fits. [Table.Text] then ends with
// a line naming them: Markdown, CSV and piped output keep every column.
func (t *Table) HideWhenNarrow(cols ...int) *Table {
	t.hide = append(t.hide, cols...)
	return t
}

// AppendRow adds a row; a cell may hold several lines separated by "\n".
func (t *Table) AppendRow(cells ...any) { t.rows = append(t.rows, table.Row(cells)) }

// Len is the number of rows.
func (t *Table) Len() int { return len(t.rows) }

func (t *Table) writer() table.Writer {
	w := table.NewWriter()
	if len(t.header) > 0 {
		w.AppendHeader(t.header)
	}
	w.AppendRows(t.rows)
	return w
}

// Markdown renders the table as a GitHub-flavoured Markdown table, full
// content, no trailing newline.
func (t *Table) Markdown() string { return t.writer().RenderMarkdown() }

// CSV renders the table as CSV (header first), full content, no trailing
// newline.
func (t *Table) CSV() string { return t.writer().RenderCSV() }

// Text draws the table with light lines, no outer border and no lines
// between rows, fitted to o.Width (see the package documentation). Lines
// carry no trailing blanks and the result no trailing newline. A table
// whose Keep columns alone are wider than o.Width stays wider.
func (t *Table) Text(o Options) string {
	style := table.StyleLight
	style.Options.DrawBorder = false
	style.Options.SeparateRows = false
	style.Format.Header = text.FormatDefault
	style.Color = table.ColorOptions{}
	if o.Color {
		style.Color.Header = text.Colors{text.Bold}
	}
	render := func(cfgs []table.ColumnConfig) string {
		w := t.writer()
		w.SetStyle(style)
		w.SetColumnConfigs(cfgs)
		return w.Render()
	}
	out := render(nil)
	var hidden []string
	if o.Width > 0 {
		for k := 0; k <= len(t.hide); k++ {
			var cfgs []table.ColumnConfig
			gone := map[int]bool{}
			hidden = hidden[:0]
			for _, col := range t.hide[:k] {
				gone[col] = true
				cfgs = append(cfgs, table.ColumnConfig{Number: col + 1, Hidden: true})
				if col < len(t.header) {
					hidden = append(hidden, fmt.Sprint(t.header[col]))
				}
			}
			out = render(cfgs)
			if got := text.LongestLineLen(out); got > o.Width {
				if more := t.narrow(got-o.Width, gone); len(more) > 0 {
					out = render(append(cfgs, more...))
				}
			}
			if text.LongestLineLen(out) <= o.Width {
				break
			}
		}
	}
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		lines[i] = trimRight(l)
	}
	if len(hidden) > 0 {
		lines = append(lines, text.WrapSoft(fmt.Sprintf("(%s not shown at %d columns: a wider terminal, a pipe or --format markdown shows them)",
			strings.Join(hidden, ", "), o.Width), o.Width))
	}
	return strings.Join(lines, "\n")
}

// reset ends a coloured cell.
const reset = "\x1b[0m"

// trimRight drops the blanks go-pretty pads the last column with, also
// when a colour reset follows them; trailing blanks only hurt diffs.
func trimRight(l string) string {
	if body, ok := strings.CutSuffix(l, reset); ok {
		return strings.TrimRight(body, " ") + reset
	}
	return strings.TrimRight(l, " ")
}

// narrow returns column configs that take excess terminal columns out of
// the Wrap and Truncate columns: all of them are capped at one width, the
// largest that absorbs the excess, and none goes below its minimum.
func (t *Table) narrow(excess int, hidden map[int]bool) []table.ColumnConfig {
	natural := map[int]int{}
	floor := map[int]int{}
	for col, f := range t.fits {
		if f.how == Keep || hidden[col] {
			continue
		}
		floor[col] = f.min
		if col < len(t.header) {
			floor[col] = max(floor[col], text.LongestLineLen(fmt.Sprint(t.header[col])))
		}
		for _, r := range t.rows {
			if col < len(r) {
				natural[col] = max(natural[col], text.LongestLineLen(fmt.Sprint(r[col])))
			}
		}
		if col < len(t.header) {
			natural[col] = max(natural[col], text.LongestLineLen(fmt.Sprint(t.header[col])))
		}
	}
	widthAt := func(limit int) map[int]int {
		ws := map[int]int{}
		for col, n := range natural {
			ws[col] = min(n, max(limit, floor[col]))
		}
		return ws
	}
	total := func(ws map[int]int) int {
		s := 0
		for _, n := range ws {
			s += n
		}
		return s
	}
	want := total(natural) - excess
	widest := 0
	for _, n := range natural {
		widest = max(widest, n)
	}
	// The cap only lowers widths, so walk it down until the flexible
	// columns fit or all of them sit at their minimum.
	limit := widest
	for limit > 0 && total(widthAt(limit)) > want {
		limit--
	}
	var cfgs []table.ColumnConfig
	for col, n := range widthAt(limit) {
		if n >= natural[col] {
			continue
		}
		enforce := wrap
		if t.fits[col].how == Truncate {
			enforce = truncate
		}
		cfgs = append(cfgs, table.ColumnConfig{Number: col + 1, WidthMax: n, WidthMaxEnforcer: enforce})
	}
	return cfgs
}

// wrap wraps every line of s at spaces to n terminal columns; go-pretty's
// text.WrapSoft alone would join a cell's lines.
func wrap(s string, n int) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = text.WrapSoft(l, n)
	}
	return strings.Join(lines, "\n")
}

// truncate cuts every line of s to n terminal columns, ending a cut line
// in "…".
func truncate(s string, n int) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = text.Snip(l, n, "…")
	}
	return strings.Join(lines, "\n")
}

// Heading is a section title as every report writes it: "## s" in
// Markdown, s in capitals in text; the caller adds the blank lines.
func Heading(s string, markdown bool) string {
	if markdown {
		return "## " + s
	}
	return strings.ToUpper(s)
}
