// Package english writes counts the way a sentence needs them.
package english

import (
	"strconv"
	"strings"
)

// Plural returns noun for n == 1 and its regular plural otherwise:
// "episode" → "episodes", "process" → "processes". Irregular nouns are
// not handled.
func Plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	for _, end := range []string{"s", "x", "z", "ch", "sh"} {
		if strings.HasSuffix(noun, end) {
			return noun + "es"
		}
	}
	return noun + "s"
}

// Count returns n and the noun in the right number: "1 episode",
// "0 episodes", "3 OOM kills".
func Count(n int, noun string) string {
	return strconv.Itoa(n) + " " + Plural(n, noun)
}
