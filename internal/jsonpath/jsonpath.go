// Package jsonpath holds what the job parser (package scheduler) and the
// typed payload checker (package action) share to name a JSON value in an
// error: its path, and its text.
package jsonpath

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"unicode/utf8"
)

// Key appends member k to path: ".k" ("k" when path is empty), or
// `["k"]` when k is not a plain name.
func Key(path, k string) string {
	plain := k != ""
	for i, r := range k {
		if !(r == '_' || r == '-' && i > 0 || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' && i > 0) {
			plain = false
		}
	}
	if !plain {
		return path + "[" + strconv.Quote(k) + "]"
	}
	if path == "" {
		return k
	}
	return path + "." + k
}

// SortedKeys returns the keys of m in order.
func SortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// MaxText is how many characters of an offending value an error shows.
const MaxText = 64

// Text renders v as JSON text, abbreviated to MaxText characters.
func Text(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return Abbreviate(string(b))
}

// Abbreviate cuts s to MaxText characters, the last three "...".
func Abbreviate(s string) string {
	if utf8.RuneCountInString(s) <= MaxText {
		return s
	}
	r := []rune(s)
	return string(r[:MaxText-3]) + "..."
}
