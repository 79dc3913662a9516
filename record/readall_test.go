package record

import (
	"os"
	"reflect"
	"testing"
)

// ReadAll of an open file reads what ReadFile reads of its path.
func TestReadAll(t *testing.T) {
	const p = "../correlate/testdata/union.jsonl.gz"
	want, err := ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := ReadAll(f, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Samples) != len(want.Samples) || len(got.Samples) == 0 || !reflect.DeepEqual(got.Header, want.Header) {
		t.Errorf("ReadAll: %d samples; ReadFile: %d, or another header", len(got.Samples), len(want.Samples))
	}
}
