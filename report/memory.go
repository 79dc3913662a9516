package report

import (
	"fmt"
	"strings"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/memview"
)

// memoryText writes the OOM kills and the processes whose anonymous
// memory grew steadily, after the verdict; nothing when there are none.
func memoryText(b *strings.Builder, r *correlate.Result, heading func(string), bullet string) {
	if len(r.OOMKills) > 0 {
		b.WriteString("\n")
		heading("OOM kills")
		for _, k := range r.OOMKills {
			fmt.Fprintf(b, "%s%s: %d OOM kill(s)", bullet, in(r, k.Time).Format("15:04:05"), k.Count)
			if len(k.Exited) > 0 {
				fmt.Fprintf(b, "; exited then: %s", strings.Join(k.Exited, ", "))
			}
			b.WriteString("\n")
		}
	}
	if len(r.Growth) > 0 {
		b.WriteString("\n")
		heading("Memory growth")
		for _, g := range r.Growth {
			fmt.Fprintf(b, "%s%s (pid %d): anonymous memory grew %.0f MiB/h (R² %.2f) over %s, %s → %s\n",
				bullet, g.Comm, g.PID, g.AnonSlope, g.AnonR2, correlate.FormatDuration(g.Observed),
				memview.FormatBytes(g.AnonFirstBytes), memview.FormatBytes(g.AnonLastBytes))
		}
		fmt.Fprintf(b, "\n%s\n", memview.LeakOrRetention)
	}
}
