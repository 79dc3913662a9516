package helptext

import "testing"

func TestWrapFlagUsages(t *testing.T) {
	listing := "  -f, --format format   output format: table, json or csv\n" +
		"      --top int         processes kept per sample, by I/O in the interval"
	got := WrapFlagUsages(listing, 50)
	want := "  -f, --format format   output format: table, json\n" +
		"                        or csv\n" +
		"      --top int         processes kept per sample,\n" +
		"                        by I/O in the interval"
	if got != want {
		t.Errorf("WrapFlagUsages(50) =\n%s\nwant\n%s", got, want)
	}
	// Too little room for the descriptions: the listing as it was.
	if got := WrapFlagUsages(listing, 30); got != listing {
		t.Errorf("WrapFlagUsages(30) changed the listing:\n%s", got)
	}
	// A word longer than the room stays whole on its own line.
	long := "      --url string   see https://example.com/a/very/long/path/that/does/not/fit here"
	want = "      --url string   see\n" +
		"                     https://example.com/a/very/long/path/that/does/not/fit\n" +
		"                     here"
	if got := WrapFlagUsages(long, 50); got != want {
		t.Errorf("long word:\n%s\nwant\n%s", got, want)
	}
}
