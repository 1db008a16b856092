// Package jsonpath holds what the job parser (package scheduler) and the
// typed payload checker (package action) share to name a JSON value in an
// error: its path, and its text.
package jsonpath

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
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

// Join returns path rel under path base: "base.rel", "base[0]" for a rel
// that starts with an index or a quoted key, base for an empty rel and rel
// for an empty base.
func Join(base, rel string) string {
	switch {
	case base == "":
		return rel
	case rel == "":
		return base
	case strings.HasPrefix(rel, "["):
		return base + rel
	}
	return base + "." + rel
}

// Replace returns text with each place where path stands whole (neither
// the end of a longer path nor the start of one) written as with instead:
// in "repeats schedule.hours[0]", schedule.hours[0] stands whole, but not
// schedule.hours, nor hours[0].
func Replace(text, path, with string) string {
	if path == "" {
		return text
	}
	var b strings.Builder
	for {
		i := strings.Index(text, path)
		if i < 0 {
			b.WriteString(text)
			return b.String()
		}
		end := i + len(path)
		if (i == 0 || !inPath(text[i-1])) && !continues(text[end:]) {
			b.WriteString(text[:i])
			b.WriteString(with)
		} else {
			b.WriteString(text[:end])
		}
		text = text[end:]
	}
}

// inPath reports whether c may stand inside a path.
func inPath(c byte) bool {
	return c == '_' || c == '-' || c == '.' || c == '[' || c == ']' ||
		'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// continues reports whether rest, the text after a path, goes on with
// more of the path: a member's name, an index or ".name" (a full stop
// that ends a sentence does not).
func continues(rest string) bool {
	if rest == "" {
		return false
	}
	switch c := rest[0]; {
	case c == '[' || c == '_' || c == '-' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9':
		return true
	case c == '.':
		return len(rest) > 1 && rest[1] != ' ' && rest[1] != '\n'
	}
	return false
}
