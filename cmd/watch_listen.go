package cmd

import (
	"context"
	"fmt"

	"github.com/memdiag/memdiag/exposition"
	"github.com/memdiag/memdiag/record"
)

// startListen serves /metrics on addr for a sampling command (watch
// --listen), fed by the returned observe; stop ends serving. An address
// that cannot be bound is an error before the first sample.
func startListen(ctx context.Context, f *factory, addr string, hdr *record.Header) (observe func(*record.Sample), stop func(), err error) {
	if addr == "" {
		return func(*record.Sample) {}, func() {}, nil
	}
	exp := exposition.New(*hdr, exposition.Options{Now: f.Now})
	srv, err := exposition.Listen(ctx, addr, exp)
	if err != nil {
		return nil, nil, &exitCodeError{Code: exitError, Err: err}
	}
	fmt.Fprintf(f.IO.ErrOut, "memdiag: metrics at http://%s/metrics\n", srv.Addr())
	return exp.Observe, func() { _ = srv.Close() }, nil
}
