package format

import (
	"errors"
	"testing"
)

func TestParse(t *testing.T) {
	all := []Format{Table, Markdown, JSON, CSV}
	for in, want := range map[string]Format{"": Table, "table": Table, "MD": Markdown, "markdown": Markdown, " json ": JSON, "Csv": CSV} {
		if got, err := Parse(in, all); err != nil || got != want {
			t.Errorf("Parse(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	_, err := Parse("xml", all)
	if !errors.Is(err, ErrUnknown) {
		t.Fatalf("Parse(xml) error %v does not wrap ErrUnknown", err)
	}
	if got, want := err.Error(), `unknown format "xml"; want one of table, markdown, json, csv`; got != want {
		t.Errorf("Parse(xml) error = %q, want %q", got, want)
	}
	if _, err := Parse("github", all); err == nil {
		t.Error("Parse(github) accepted a format outside allowed")
	}
}

func TestValue(t *testing.T) {
	var s Format
	v := NewValue(&s, JSON, []Format{Table, JSON})
	if s != JSON || v.String() != "json" {
		t.Fatalf("default = %q", s)
	}
	if err := v.Set("TABLE"); err != nil || s != Table {
		t.Errorf("Set(TABLE) = %v, s = %q", err, s)
	}
	if err := v.Set("csv"); err == nil || s != Table {
		t.Errorf("Set(csv) = %v, s = %q; want an error and s unchanged", err, s)
	}
}

func TestUnsupported(t *testing.T) {
	err := Unsupported("pdf", []Format{Table, JSON})
	if !errors.Is(err, ErrUnknown) || err.Error() != `unknown format "pdf"; want one of table, json` {
		t.Errorf("Unsupported(pdf) = %v", err)
	}
}

func TestForOutput(t *testing.T) {
	for _, c := range []struct {
		def    Format
		given  bool
		output string
		want   Format
	}{
		{Table, false, "", Table},
		{Table, false, "report.HTML", HTML},
		{Table, false, "r.htm", HTML},
		{Table, false, "r.json", Table},
		{JSON, true, "r.html", JSON}, // --format given wins over the name
	} {
		if got := ForOutput(c.def, c.given, c.output); got != c.want {
			t.Errorf("ForOutput(%s, %v, %q) = %s, want %s", c.def, c.given, c.output, got, c.want)
		}
	}
}
