// Package suggest finds, for a name a user got wrong, the names they most
// likely meant: the "did you mean" of the job parser's problems and of the
// command line.
//
// The rule: a candidate is close to name when turning one into the other,
// without regard to case, takes at most MaxDistance edits (inserting,
// deleting or replacing a character, or swapping two adjacent ones: the
// optimal string alignment distance, Levenshtein's with transpositions),
// and no more than one for every three characters of the longer of the
// two. So "urii" is close to "uri", "nmae" to "name", "recurence" to
// "recurrence" and "Minit" to "Minute", but "id" is not close to "uri". Of the close candidates, those
// at the smallest distance are suggested.
package suggest

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxDistance is the largest edit distance at which a candidate is
// suggested.
const MaxDistance = 2

// Closest returns the candidates closest to name (see the package
// documentation), in the order given, or nil when none is close. A
// candidate equal to name without regard to case is not suggested: it is
// not what went wrong.
func Closest(name string, candidates []string) []string {
	var best []string
	bestDist := MaxDistance + 1
	lower := strings.ToLower(name)
	for _, c := range candidates {
		d := distance(lower, strings.ToLower(c))
		longer := max(utf8.RuneCountInString(name), utf8.RuneCountInString(c))
		if d == 0 || d > MaxDistance || d*3 > longer || d > bestDist {
			continue
		}
		if d < bestDist {
			best, bestDist = best[:0], d
		}
		if !slices.Contains(best, c) {
			best = append(best, c)
		}
	}
	return best
}

// DidYouMean returns ", did you mean "A"?" (or "A" or "B") for the
// candidates closest to name, or "" when none is close.
func DidYouMean(name string, candidates []string) string {
	close := Closest(name, candidates)
	if len(close) == 0 {
		return ""
	}
	return ", did you mean " + Or(close, strconv.Quote) + "?"
}

// Or joins names, each rendered by quote, as "A", "A or B" or "A, B or
// C".
func Or(names []string, quote func(string) string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = quote(n)
	}
	if len(q) < 2 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// distance returns the optimal string alignment distance between a and
// b, in runes: the edits are inserting, deleting or replacing a rune and
// swapping two adjacent ones.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// Three rows of the table: i-2, i-1 and i.
	rows := [3][]int{make([]int, len(rb)+1), make([]int, len(rb)+1), make([]int, len(rb)+1)}
	for j := range rows[1] {
		rows[1][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		older, prev, cur := rows[0], rows[1], rows[2]
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], older[j-2]+1)
			}
		}
		rows[0], rows[1], rows[2] = prev, cur, older
	}
	return rows[1][len(rb)]
}
