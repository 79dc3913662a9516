package gatereport

import (
	"testing"

	"github.com/memdiag/memdiag/gate"
	"github.com/memdiag/memdiag/gate/gatetest"
)

// The synthetic runs of gate/gatetest.
type step = gatetest.Step

var (
	u64     = gatetest.U64
	psiSnap = gatetest.PSI
	host    = gatetest.Host
)

func mustParse(t *testing.T, exprs ...string) []*gate.Threshold {
	t.Helper()
	ths, err := gate.ParseAll(exprs)
	if err != nil {
		t.Fatal(err)
	}
	return ths
}
