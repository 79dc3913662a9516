// Command memdiag finds why latency spikes under memory pressure and which
// periodic job keeps causing it. See README.md.
package main

import (
	"os"

	"github.com/memdiag/memdiag/cmd"
)

func main() { os.Exit(cmd.Main(os.Args[1:])) }
