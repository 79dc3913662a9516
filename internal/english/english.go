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

// List joins words as a sentence lists them, with conj before the last:
// "a", "a and b", "a, b and c" (conj "and"); "" for none.
func List(words []string, conj string) string {
	switch n := len(words); n {
	case 0:
		return ""
	case 1:
		return words[0]
	default:
		return strings.Join(words[:n-1], ", ") + " " + conj + " " + words[n-1]
	}
}
