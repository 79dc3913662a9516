package gatereport

import (
	"fmt"
	"github.com/memdiag/memdiag/gate"
	"io"
	"io/fs"

	"github.com/memdiag/memdiag/internal/format"
	"github.com/memdiag/memdiag/internal/outfile"
)

// Outputs are where a judged run's report goes: Stdout in Format, or
// the file Output instead (full width, no colour); JUnit XML to JUnit;
// a markdown summary appended to StepSummary (GitHub's
// GITHUB_STEP_SUMMARY). Files are written with outfile: rewritten on
// each run (the step summary appended), never through a link, with Mode.
type Outputs struct {
	Stdout      io.Writer
	Format      format.Format
	Render      RenderOptions
	Output      string // "": Stdout
	JUnit       string // "": none
	StepSummary string // "": none
	Mode        fs.FileMode
	// Force rewrites an existing --output or --junit file; without it
	// one is kept, as every command's report (the caller checks first).
	Force bool
}

// Write writes rep to every output, stopping at the first error.
func (o Outputs) Write(rep *gate.Report) error {
	ro := o.Render
	out := o.Stdout
	if o.Output != "" {
		ro.Width, ro.Color = 0, false // a file: full content, no escapes
		f, err := outfile.Create(o.Output, outfile.Options{Overwrite: o.Force, Mode: o.Mode})
		if err != nil {
			return fmt.Errorf("--output: %w", err)
		}
		defer f.Close()
		out = f
	}
	if err := Render(out, rep, o.Format, ro); err != nil {
		return err
	}
	if o.JUnit != "" {
		if err := writeFile(o.JUnit, o.Mode, o.Force, func(w io.Writer) error { return WriteJUnit(w, rep, ro.Location) }); err != nil {
			return err
		}
	}
	if o.StepSummary == "" {
		return nil
	}
	f, err := outfile.Create(o.StepSummary, outfile.Options{Append: true})
	if err != nil {
		return fmt.Errorf("GITHUB_STEP_SUMMARY: %w", err)
	}
	err = Render(f, rep, format.Markdown, ro)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("GITHUB_STEP_SUMMARY: %w", err)
	}
	return nil
}

// writeFile writes a report file with outfile: an existing one only
// with force, never through a symbolic or hard link, with mode (--mode,
// 0600).
func writeFile(path string, mode fs.FileMode, force bool, write func(io.Writer) error) error {
	f, err := outfile.Create(path, outfile.Options{Overwrite: force, Mode: mode})
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}
