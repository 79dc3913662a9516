// Package english writes counts the way a sentence needs them.
package english

import "strconv"

// Plural returns noun for n == 1 and noun+"s" otherwise ("episode",
// "episodes"). Only for nouns whose plural adds an s.
func Plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}

// Count returns n and the noun in the right number: "1 episode",
// "0 episodes", "3 OOM kills".
func Count(n int, noun string) string {
	return strconv.Itoa(n) + " " + Plural(n, noun)
}
