package cmd

import (
	"path/filepath"
	"testing"

	goldenfile "github.com/memdiag/memdiag/internal/golden"
)

// golden compares got with testdata/golden/<name>, or writes it there
// under MEMDIAG_UPDATE_GOLDEN=1. Review every such diff like code.
func golden(t *testing.T, name string, got string) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", "golden", name), got)
}
