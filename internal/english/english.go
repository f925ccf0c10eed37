package english

import (
	"strconv"
	"strings"
)

// Count writes n and unit, adding "s" to unit unless n is 1 (or −1):
// Count(1, "run") is "1 run", Count(0, "run") is "0 runs". Units whose
// plural is not unit+"s" use CountAs.
func Count(n int, unit string) string {
	return CountAs(n, unit, unit+"s")
}

// CountAs writes n and one or many: CountAs(3, "class", "classes") is
// "3 classes".
func CountAs(n int, one, many string) string {
	return strconv.Itoa(n) + " " + Noun(n, one, many)
}

// Noun is one when n is 1 (or −1) and many otherwise, for sentences that
// put the number elsewhere.
func Noun(n int, one, many string) string {
	if n == 1 || n == -1 {
		return one
	}
	return many
}

// Thousands writes n with a comma between groups of three digits:
// Thousands(1999) is "1,999", Thousands(-1234567) is "-1,234,567".
func Thousands(n int) string {
	s := strconv.Itoa(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 && s[i-1] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
