package analysis

import (
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/redact"
)

// Redacted returns src with the command lines, job commands, the wrapped
// command, the --probe URL, errors and warnings of its header and samples
// redacted as they are read (redact.String). A recording made with
// --no-redact, or by a memdiag before a redaction rule existed, holds
// them as they were; what analyze and compare print is redacted all the
// same. Redacting a redacted recording changes nothing.
func Redacted(src Source) Source {
	return &redactedSource{src: src}
}

// redactedSource is a Source whose text is redacted on the way out.
// Samples come one at a time (record.Reader hands them on in order from
// one goroutine), so the memo needs no lock.
type redactedSource struct {
	src  Source
	memo redact.Memo
}

func (r *redactedSource) Header() record.Header {
	h := r.src.Header()
	r.header(&h)
	return h
}

func (r *redactedSource) Each(fn func(*record.Sample)) (*record.Recording, error) {
	rec, err := r.src.Each(func(s *record.Sample) {
		r.sample(s)
		fn(s)
	})
	if rec != nil {
		r.header(&rec.Header)
		r.strings(rec.Warnings)
	}
	return rec, err
}

func (r *redactedSource) header(h *record.Header) {
	if len(h.Command) > 0 {
		h.Command = []string{redact.Cmdline(h.Command)}
	}
	h.Probe = redact.URL(h.Probe)
	for i := range h.Jobs {
		h.Jobs[i].Command = r.memo.String(h.Jobs[i].Command)
		r.strings(h.Jobs[i].Errors)
	}
}

func (r *redactedSource) sample(s *record.Sample) {
	r.procs(s.Procs)
	for i := range s.Onsets {
		r.procs(s.Onsets[i].Procs)
	}
	for i := range s.Events {
		e := &s.Events[i]
		e.Cmdline, e.ParentCmdline = r.memo.String(e.Cmdline), r.memo.String(e.ParentCmdline)
	}
	r.strings(s.Errors)
}

func (r *redactedSource) procs(ps []record.ProcIO) {
	for i := range ps {
		ps[i].Cmdline = r.memo.String(ps[i].Cmdline)
	}
}

func (r *redactedSource) strings(ss []string) {
	for i, s := range ss {
		ss[i] = r.memo.String(s)
	}
}
