package confirm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"time"

	"github.com/memdiag/memdiag/internal/supervise"
	"github.com/memdiag/memdiag/latency"
	"github.com/memdiag/memdiag/psi"
)

// Load runs the user's load for a block and measures it on the live
// host.
type Load struct {
	// Command is the load (the command after --). It is started at the
	// block's start; if it ends (exit 0) before Block has passed it is
	// started again, and when Block has passed it is stopped (SIGTERM,
	// then SIGKILL after supervise's grace). It is started at most once a
	// second. With Block 0 a block is one run of the command.
	Command []string
	Block   time.Duration
	// Probe, when set, is GET every ProbeInterval during the block; its
	// latencies are the block's p99 and spikes.
	Probe    *latency.Probe
	Stdin    io.Reader
	Stdout   io.Writer
	Stderr   io.Writer
	ProcRoot string // where pressure/memory is read ("/proc" live)
	Now      func() time.Time
	Grace    time.Duration // supervise grace (tests); 0 = supervise.Grace
}

// ErrLoadFailed says the load command failed on its own.
var ErrLoadFailed = errors.New("the load failed")

// RunBlock runs the load for block b and returns its measurement.
func (l *Load) RunBlock(ctx context.Context, b Block) (Measurement, error) {
	before := l.memoryPSI()
	start := l.Now()
	pctx, stopProbe := context.WithCancel(ctx)
	var reqs []latency.Request
	var wg sync.WaitGroup
	if l.Probe != nil {
		ch := make(chan latency.Request, 64)
		wg.Add(2)
		go func() { defer wg.Done(); _ = l.Probe.Run(pctx, ch); close(ch) }()
		go func() {
			defer wg.Done()
			for r := range ch {
				reqs = append(reqs, r)
			}
		}()
	}
	err := l.runLoad(ctx)
	stopProbe()
	wg.Wait()
	wall := l.Now().Sub(start)
	after := l.memoryPSI()
	if err != nil {
		return Measurement{}, err
	}
	return Measure(b, start, wall, reqs, before, after), nil
}

// restartEvery is the least time between two starts of the load within a
// block.
const restartEvery = time.Second

// runLoad runs the command (again and again) until the block is over.
func (l *Load) runLoad(ctx context.Context) error {
	var timeout <-chan time.Time
	if l.Block > 0 {
		t := time.NewTimer(l.Block)
		defer t.Stop()
		timeout = t.C
	}
	for {
		began := time.Now()
		child, err := supervise.Start(supervise.Options{Args: l.Command, Stdin: l.Stdin, Stdout: l.Stdout, Stderr: l.Stderr, Grace: l.Grace, DieWithParent: true})
		if err != nil {
			return fmt.Errorf("%w: could not start %s: %w", ErrLoadFailed, l.Command[0], err)
		}
		select {
		case <-child.Done():
			res := child.Result()
			if res.Failed() {
				return fmt.Errorf("%w: %s", ErrLoadFailed, res.Describe())
			}
			if l.Block == 0 {
				return nil
			}
			// A load that ends at once is started again at most once
			// a second, not in a loop of forks.
			if time.Since(began) < restartEvery {
				select {
				case <-time.After(restartEvery - time.Since(began)):
				case <-timeout:
					return nil
				case <-ctx.Done():
					return context.Cause(ctx)
				}
			}
		case <-timeout:
			child.Stop("block over")
			return nil
		case <-ctx.Done():
			child.Stop("interrupt")
			return context.Cause(ctx)
		}
	}
}

// memoryPSI reads /proc/pressure/memory; nil where the kernel has none.
func (l *Load) memoryPSI() *psi.Resource {
	r, err := psi.ReadFile(filepath.Join(l.ProcRoot, "pressure/memory"))
	if err != nil {
		return nil
	}
	return &r
}
