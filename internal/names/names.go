// Package names checks the names of collections, jobs and the scope
// segments before a collection's name, without the cost of a regular
// expression: every request and every job put checks several. The root
// package and the REST API share these rules.
package names

// Valid reports whether name is a collection or job name: 1 to 100
// characters of ASCII letters, digits, '-' and '_', starting with a
// letter (the pattern ^[A-Za-z][-_A-Za-z0-9]{0,99}$).
func Valid(name string) bool {
	if len(name) == 0 || len(name) > 100 || nameByte[name[0]] != letter {
		return false
	}
	for i := 1; i < len(name); i++ {
		if nameByte[name[i]] == 0 {
			return false
		}
	}
	return true
}

// Classes of the bytes of a name, in nameByte.
const (
	letter = 1 + iota // may start a name
	other             // digits, '-' and '_'
)

// nameByte is the class of each byte in a name; 0 for those a name
// cannot hold.
var nameByte = func() (t [256]uint8) {
	for c := range 256 {
		switch {
		case 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z':
			t[c] = letter
		case '0' <= c && c <= '9' || c == '-' || c == '_':
			t[c] = other
		}
	}
	return t
}()

// ValidScope reports whether seg is a scope segment (a subscription or a
// resource group): 1 to 90 characters of ASCII letters, digits, '-', '_',
// '.', '(' and ')', starting with a letter or digit (the pattern
// ^[A-Za-z0-9][-_.()A-Za-z0-9]{0,89}$).
func ValidScope(seg string) bool {
	if len(seg) == 0 || len(seg) > 90 {
		return false
	}
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		alnum := 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9'
		if !alnum && (i == 0 || !(c == '-' || c == '_' || c == '.' || c == '(' || c == ')')) {
			return false
		}
	}
	return true
}
