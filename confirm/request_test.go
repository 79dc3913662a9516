package confirm

import (
	"errors"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/usage"
)

// TestRequestCheck: each bad combination or range is a *usage.Error
// with its message, checked in order; a good request and a bare
// --restore pass.
func TestRequestCheck(t *testing.T) {
	load := []string{"./load.sh"}
	for _, c := range []struct {
		r    Request
		want string
	}{
		{Request{Jobs: []string{"a"}, Command: load, Pairs: 5, MinEffect: 10}, ""},
		{Request{Restore: true}, ""},
		{Request{Restore: true, Jobs: []string{"a"}}, "--restore takes no job, recording or load: it undoes what the state file lists"},
		{Request{Restore: true, With: "fix.conf"}, "--restore takes no --with: it undoes what the state file lists, a fix in place included"},
		{Request{Jobs: []string{"a"}, With: "fix.conf", Command: load, Pairs: 5, MinEffect: 10}, ""},
		{Request{Restore: true, Command: load}, "--restore takes no job, recording or load: it undoes what the state file lists"},
		{Request{Command: load, Pairs: 5, MinEffect: 10}, "give --job NAME (once per job held off together) or --recording FILE, not both"},
		{Request{Jobs: []string{"a"}, Recording: "r", Command: load, Pairs: 5, MinEffect: 10}, "give --job NAME (once per job held off together) or --recording FILE, not both"},
		{Request{Jobs: []string{"a", "b", "a"}, Command: load, Pairs: 5, MinEffect: 10}, "--job a given twice"},
		{Request{Jobs: []string{"a", "b"}, Command: load, Pairs: 5, MinEffect: 10}, ""},
		{Request{Jobs: []string{"a", "b"}, With: "fix.conf", Command: load, Pairs: 5, MinEffect: 10}, "--with puts one job's fix in place: give it with one --job NAME"},
		{Request{Jobs: []string{"a"}, Pairs: 0, MinEffect: 10}, "no load: give the load command after --, e.g. memdiag confirm --job NAME -- ./load-test.sh"},
		{Request{Jobs: []string{"a"}, Command: load, Pairs: 1001, MinEffect: 10}, "--pairs 1001: want 1 to 1000"},
		{Request{Jobs: []string{"a"}, Command: load, Pairs: 5, Block: -time.Second, MinEffect: 0}, "--block must not be negative"},
		{Request{Recording: "r", Command: load, Pairs: 5, MinEffect: 100}, "--min-effect 100: want a percentage between 0 and 100"},
	} {
		err := c.r.Check()
		var ue *usage.Error
		if c.want == "" && err != nil || c.want != "" && (!errors.As(err, &ue) || err.Error() != c.want) {
			t.Errorf("%+v.Check() = %v; want %q", c.r, err, c.want)
		}
	}
}
