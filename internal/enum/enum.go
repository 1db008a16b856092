// Package enum reads the enumerations of job definitions (frequencies,
// weekdays, action, retry and authentication types, states, plans):
// strings that JSON may give in any case, stored in their canonical
// spelling.
package enum

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// Canonical returns the member of set that equals s without regard to
// case, or s itself when there is none.
func Canonical[T ~string](s string, set []T) T {
	for _, k := range set {
		if strings.EqualFold(s, string(k)) {
			return k
		}
	}
	return T(s)
}

// Unmarshal reads the JSON string b into *dst in the canonical spelling
// of set, or as given when set has no such member. An ASCII string
// without escapes, the usual case, is matched without decoding it first.
func Unmarshal[T ~string](b []byte, dst *T, set []T) error {
	if s, ok := plain(b); ok {
		for _, k := range set {
			if len(k) == len(s) && equalFoldASCII(s, string(k)) {
				*dst = k
				return nil
			}
		}
		*dst = T(s)
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*dst = Canonical(s, set)
	return nil
}

// plain returns the text between the quotes of b when b is a JSON string
// of printable ASCII without escapes.
func plain(b []byte) ([]byte, bool) {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return nil, false
	}
	s := b[1 : len(b)-1]
	for _, c := range s {
		if c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' {
			return nil, false
		}
	}
	return s, true
}

func equalFoldASCII(b []byte, s string) bool {
	for i, c := range b {
		d := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if 'A' <= d && d <= 'Z' {
			d += 'a' - 'A'
		}
		if c != d {
			return false
		}
	}
	return true
}
