package httpapi

// topLevelProperties reports whether data is an object (JSON with comments
// and trailing commas) with a member "properties" in any case, found
// without decoding it: every job body is checked for its envelope. It
// returns false whenever it is not sure, and then the body is decoded to
// decide.
func topLevelProperties(data []byte) bool {
	i := skipSpace(data, 0)
	if i < 0 || i >= len(data) || data[i] != '{' {
		return false
	}
	i++
	for {
		if i = skipSpace(data, i); i < 0 || i >= len(data) || data[i] != '"' {
			return false
		}
		start := i + 1
		end := start
		for end < len(data) && data[end] != '"' && data[end] != '\\' {
			end++
		}
		if end >= len(data) || data[end] != '"' {
			return false // an escape in a name: decode to be sure
		}
		if name := data[start:end]; len(name) == len("properties") && equalFoldASCII(name, "properties") {
			return true
		}
		if i = skipSpace(data, end+1); i < 0 || i >= len(data) || data[i] != ':' {
			return false
		}
		if i = skipValue(data, skipSpace(data, i+1)); i < 0 {
			return false
		}
		if i = skipSpace(data, i); i < 0 || i >= len(data) || data[i] != ',' {
			return false // the end of the object, or not an object
		}
		i++
	}
}

// skipSpace returns the index of the first byte at or after i that is not
// whitespace or in a comment; -1 for an unterminated comment.
func skipSpace(b []byte, i int) int {
	for i >= 0 && i < len(b) {
		switch b[i] {
		case ' ', '\t', '\r', '\n':
			i++
		case '/':
			switch {
			case i+1 < len(b) && b[i+1] == '/':
				for i < len(b) && b[i] != '\n' {
					i++
				}
			case i+1 < len(b) && b[i+1] == '*':
				j := i + 2
				for j+1 < len(b) && !(b[j] == '*' && b[j+1] == '/') {
					j++
				}
				if j+1 >= len(b) {
					return -1
				}
				i = j + 2
			default:
				return i
			}
		default:
			return i
		}
	}
	return i
}

// skipValue returns the index just after the value at i, or -1 when it
// cannot tell where the value ends. It follows strings, comments and
// nesting; it does not check that the value is well formed, which only
// matters for input that is not JSON, which the caller does not tell
// apart from JSON without the member.
func skipValue(b []byte, i int) int {
	depth := 0
	for i >= 0 && i < len(b) {
		switch b[i] {
		case '"':
			i++
			for i < len(b) && b[i] != '"' {
				if b[i] == '\\' {
					i++
				}
				i++
			}
			if i >= len(b) {
				return -1
			}
			i++
			if depth == 0 {
				return i
			}
		case '{', '[':
			depth++
			i++
		case '}', ']':
			if depth == 0 {
				return i
			}
			depth--
			i++
			if depth == 0 {
				return i
			}
		case ',', ' ', '\t', '\r', '\n':
			if depth == 0 {
				return i
			}
			i++
		case '/':
			j := skipSpace(b, i)
			if j < 0 || j == i {
				return -1 // unterminated, or a lone slash
			}
			i = j
		default:
			i++
		}
	}
	return -1
}

func equalFoldASCII(b []byte, s string) bool {
	for i := range b {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}
