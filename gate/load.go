package gate

import (
	"context"
	"errors"
	"io"

	"github.com/memdiag/memdiag/internal/rootfs"
	"github.com/memdiag/memdiag/internal/usage"
)

// Load is gate's thresholds: the expressions of --threshold, then those
// of the --thresholds file ("" for none; "-" reads stdin), which is
// opened as a file the user named (rootfs.OpenNamed: a regular file or a
// pipe of at most rootfs.ThresholdsLimit, the wait for a FIFO's writer
// ended by ctx). A bad expression or file content is a *usage.Error; a
// file that cannot be read is not.
func Load(ctx context.Context, stdin io.Reader, exprs []string, file string) ([]*Threshold, error) {
	ths, err := ParseAll(exprs)
	if err != nil {
		return nil, &usage.Error{Err: err}
	}
	if file == "" {
		return ths, nil
	}
	f, name, err := rootfs.OpenNamed(ctx, stdin, "--thresholds", file, rootfs.ThresholdsLimit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	more, err := Read(f, name)
	if errors.Is(err, ErrThreshold) {
		return nil, &usage.Error{Err: err}
	}
	if err != nil {
		return nil, err
	}
	return append(ths, more...), nil
}

// ThresholdOutcome is the outcome of the thresholds alone, the wrapped
// command's failure left out: what gate --exit-code command judges,
// passing the command's own code through when the thresholds held.
func (r *Report) ThresholdOutcome() Outcome {
	switch {
	case r.Count(NoData) > 0:
		return OutcomeNoData
	case r.Count(Fail) > 0:
		return OutcomeBreach
	}
	return OutcomePass
}
