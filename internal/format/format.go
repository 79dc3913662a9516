// Package format is memdiag's one output-format type: every command's
// --format flag takes a [Format], parses it with [Parse] and words an
// unknown name the same way.
package format

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// Format is an output format name.
type Format string

// The formats memdiag's commands write; each command accepts a subset.
const (
	Table    Format = "table"
	Markdown Format = "markdown"
	JSON     Format = "json"
	CSV      Format = "csv"
	GitHub   Format = "github" // GitHub Actions workflow commands (gate)
	HTML     Format = "html"
)

// ErrUnknown is wrapped by the error [Parse] returns for a name that is
// not among the accepted formats.
var ErrUnknown = errors.New("unknown format")

// Parse returns the format named s (any case; "md" is markdown; "" is the
// first of allowed). A name not in allowed is an error wrapping
// [ErrUnknown] that lists allowed: `unknown format "xml"; want one of
// table, markdown, json, csv`.
func Parse(s string, allowed []Format) (Format, error) {
	f := Format(strings.ToLower(strings.TrimSpace(s)))
	if f == "" && len(allowed) > 0 {
		return allowed[0], nil
	}
	if f == "md" {
		f = Markdown
	}
	for _, a := range allowed {
		if f == a {
			return f, nil
		}
	}
	return "", Unsupported(Format(s), allowed)
}

// Unsupported is the error for a format f that is not among allowed,
// worded as [Parse] words it: renderers return it for a format they do
// not write, so a bad name reads the same from a flag and from the API.
func Unsupported(f Format, allowed []Format) error {
	return fmt.Errorf("%w %q; want one of %s", ErrUnknown, string(f), List(allowed))
}

// List joins formats with ", " for help texts and messages.
func List(fs []Format) string {
	s := make([]string, len(fs))
	for i, f := range fs {
		s[i] = string(f)
	}
	return strings.Join(s, ", ")
}

// Value is a pflag.Value for a --format flag: Set rejects a name not in
// Allowed at parse time, so the error names the flag, and the Format it
// writes to is always one of Allowed. It is every command's one parser
// of --format: a command reads the Format, it never parses it again.
type Value struct {
	P       *Format
	Allowed []Format
}

// NewValue sets *p to def and returns a Value writing to p.
func NewValue(p *Format, def Format, allowed []Format) *Value {
	*p = def
	return &Value{P: p, Allowed: allowed}
}

func (v *Value) String() string {
	if v.P == nil {
		return ""
	}
	return string(*v.P)
}

// Set parses s with [Parse].
func (v *Value) Set(s string) error {
	f, err := Parse(s, v.Allowed)
	if err != nil {
		return err
	}
	*v.P = f
	return nil
}

// Type is the placeholder in usage lines.
func (v *Value) Type() string { return "format" }

// Names returns the accepted names, for shell completion.
func (v *Value) Names() []string {
	s := make([]string, len(v.Allowed))
	for i, f := range v.Allowed {
		s[i] = string(f)
	}
	return s
}

// ForOutput is the format of a command that also has --output: given
// (the --format flag's value when it was set on the command line), else
// HTML for an output file named *.html or *.htm, else def.
func ForOutput(def Format, given bool, output string) Format {
	if given {
		return def
	}
	switch strings.ToLower(filepath.Ext(output)) {
	case ".html", ".htm":
		return HTML
	}
	return def
}
