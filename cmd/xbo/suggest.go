package main

import (
	"sort"
	"strings"
)

// suggest returns the candidate a mistyped word most likely meant, or ""
// when none is close enough to be worth naming: a wrong suggestion sends
// the user further astray than none. A candidate is close when the word is
// a prefix of it and no other candidate shares that prefix, or when it is
// within editLimit edits (a swap of two neighbouring letters is one edit,
// the commonest typo: "trails" for "trials"). Ties go to the candidate
// first in sort order, so the answer does not depend on map order.
func suggest(word string, candidates []string) string {
	if word == "" || len(candidates) == 0 {
		return ""
	}
	sorted := append([]string(nil), candidates...)
	sort.Strings(sorted)
	var prefixed []string
	for _, c := range sorted {
		if c != word && strings.HasPrefix(c, word) {
			prefixed = append(prefixed, c)
		}
	}
	if len(prefixed) == 1 {
		return prefixed[0]
	}
	best, bestDist := "", editLimit(word)+1
	for _, c := range sorted {
		if c == word {
			continue
		}
		if d := editDistance(word, c); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// editLimit is how many edits a word may be from what it meant: one for
// short words (any two-letter word is two edits from most others), up to
// three for long ones.
func editLimit(word string) int {
	return min(3, 1+len([]rune(word))/5)
}

// editDistance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and swaps of neighbouring runes each
// count one.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// Three rows suffice: a swap looks two rows back.
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
