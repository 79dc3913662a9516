package helptext

import (
	"strings"
	"unicode/utf8"
)

// WrapFlagUsages wraps the description column of pflag's unwrapped flag
// listing (one flag a line, descriptions starting in one column) at
// width, continuation lines indented to that column. A word longer than
// the column's room stays whole on a line of its own; the rest wraps on.
func WrapFlagUsages(listing string, width int) string {
	lines := strings.Split(listing, "\n")
	col := 0
	for _, l := range lines {
		// "  -f, --format format   description": the description starts
		// after the widest flag part plus three spaces, the same for all.
		lead := len(l) - len(strings.TrimLeft(l, " "))
		if i := strings.Index(l[lead:], "   "); i > 0 && lead >= 2 {
			j := lead + i
			for j < len(l) && l[j] == ' ' {
				j++
			}
			if j < len(l) {
				col = j
				break
			}
		}
	}
	room := width - col
	if col == 0 || room < 24 {
		return listing
	}
	var b strings.Builder
	for n, l := range lines {
		if n > 0 {
			b.WriteByte('\n')
		}
		if len(l) <= width || len(l) < col {
			b.WriteString(l)
			continue
		}
		b.WriteString(l[:col])
		used := 0
		for _, w := range strings.Fields(l[col:]) {
			wl := utf8.RuneCountInString(w)
			if used > 0 && used+1+wl > room {
				b.WriteString("\n" + strings.Repeat(" ", col))
				used = 0
			} else if used > 0 {
				b.WriteByte(' ')
				used++
			}
			b.WriteString(w)
			used += wl
		}
	}
	return b.String()
}
