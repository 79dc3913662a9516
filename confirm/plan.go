package confirm

import "fmt"

// Arm is one side of the experiment.
type Arm string

// The two arms.
const (
	// AsIs is block A: the host as it is, the job free to run.
	AsIs Arm = "A"
	// HeldOff is block B: the job held off (or the fix in place).
	HeldOff Arm = "B"
)

// Block is one planned block of the experiment.
type Block struct {
	Index int // 0-based position in the run
	Pair  int // 0-based pair the block belongs to
	Arm   Arm
}

// Plan returns the blocks of an experiment of pairs pairs: pair i runs
// A then B when i is even and B then A when i is odd (AB BA AB BA …), so
// each arm is as often first as second and a linear drift over the run
// adds the same amount to both arms' totals when pairs is even.
func Plan(pairs int) ([]Block, error) {
	if pairs < 1 {
		return nil, fmt.Errorf("pairs must be at least 1, got %d", pairs)
	}
	out := make([]Block, 0, 2*pairs)
	for p := range pairs {
		first, second := AsIs, HeldOff
		if p%2 == 1 {
			first, second = HeldOff, AsIs
		}
		out = append(out, Block{Index: 2 * p, Pair: p, Arm: first}, Block{Index: 2*p + 1, Pair: p, Arm: second})
	}
	return out, nil
}
