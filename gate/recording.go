package gate

import (
	"github.com/memdiag/memdiag/record"
)

// JudgeRecording judges a recording made by watch or record (name names
// it in errors) in the scope it was made in: its gaps are the report's
// lacks and a recording that ended abnormally is cut short (never a
// pass). The caller adds analyze's verdict (NoteCulprits with
// analysis.Verdict). Too few samples is an error.
func JudgeRecording(rec *record.Recording, name string, ths []*Threshold, a SuspectAction) (*Report, error) {
	gaps := record.NewGaps(rec.Header)
	for i := range rec.Samples {
		gaps.Add(&rec.Samples[i])
	}
	if err := record.NeedSamples(name, len(rec.Samples), rec.End, rec.Warnings); err != nil {
		return nil, err
	}
	rep := Evaluate(&rec.Header, rec.Samples, Scope{Cgroup: rec.Header.Cgroup, Limit: rec.Header.CgroupLimit, LimitBytes: rec.Header.CgroupLimitBytes}, ths)
	rep.Warnings = rec.Warnings
	rep.Lacks = gaps.Lines(rec.End, rec.Warnings)
	if why := gaps.Abnormal(rec.End, rec.Warnings); why != "" {
		rep.CutShort(why)
	}
	rep.CheckPSI(rec.Samples, rec.Header.Kernel, a)
	return rep, nil
}
