// Package jsonc reads JSON with comments and trailing commas, the syntax
// of job definitions and of the management API's request bodies. A
// Scanner reads one value in a single pass, handing each part to its
// caller as the caller asks for it, so that a decoder can check every
// value against the type it reads it into and say at which JSON path a
// value is wrong; a syntax error says at which line and column the input
// stops being JSON.
//
// Comments are // to the end of the line and /* ... */; a comma may
// follow the last member of an object or the last element of an array.
// Otherwise the grammar is JSON's (RFC 8259): strings are checked as
// encoding/json checks them (escapes, no control characters; invalid
// UTF-8 is taken, and becomes U+FFFD when the string is read), and so are
// numbers. Values nest at most MaxDepth deep.
package jsonc

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/bits"
	"unicode"
	"unicode/utf8"
)

// MaxDepth is how deeply arrays and objects may nest, as in
// encoding/json.
const MaxDepth = 10000

// Kind is the kind of a JSON value.
type Kind uint8

// The kinds of JSON values.
const (
	Null Kind = iota + 1
	False
	True
	Number
	String
	Object
	Array
)

// SyntaxError reports input that is not JSON with comments. Line and
// Column count from 1; Column counts bytes.
type SyntaxError struct {
	Line, Column int
	Msg          string
}

// Error returns "line L, column C: MSG".
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// Scanner reads one JSON value from its input. Its caller asks for the
// kind of the value that comes next, then reads it with the method for
// that kind (or skips it); objects and arrays hand each member or element
// to a function that reads it in turn. After the first syntax error every
// method reports failure (false, or 0 for Kind) and Err says what is
// wrong; a caller that stops reading at a failure then has that error.
//
// The zero Scanner reads empty input; Reset gives it input.
type Scanner struct {
	src   []byte
	n     int // the offset of the next byte to read
	size  int // bytes read that are neither space, comment nor trailing comma
	depth int
	err   *errAt
	// extra, when not nil, collects the comments and trailing commas
	// read, for Standardize.
	extra *[]span
}

// span is src[start:end].
type span struct{ start, end int }

// errAt is an error found at an offset of the input.
type errAt struct {
	off int
	msg string
}

// NewScanner returns a Scanner that reads src, which must not change while
// it is read.
func NewScanner(src []byte) *Scanner {
	s := new(Scanner)
	s.Reset(src)
	return s
}

// Reset makes s read src from its start.
func (s *Scanner) Reset(src []byte) { *s = Scanner{src: src} }

// Err returns the first syntax error, or nil.
func (s *Scanner) Err() error {
	if s.err == nil {
		return nil
	}
	// An error at the end of the input is just after its last byte: on
	// its last line (that of a one-line input is on line 1), at the start
	// of a line only when the input ends in a newline.
	b, off := s.src, min(s.err.off, len(s.src))
	line := 1 + bytes.Count(b[:off], []byte("\n"))
	col := 1 + off - (bytes.LastIndexByte(b[:off], '\n') + 1)
	return &SyntaxError{Line: line, Column: col, Msg: s.err.msg}
}

// Size returns the number of bytes read so far that are neither
// whitespace, comments nor trailing commas: once the value is read, its
// length as compact JSON.
func (s *Scanner) Size() int { return s.size }

// Offset returns where the next value starts: the offset of the byte that
// Kind looked at last.
func (s *Scanner) Offset() int { return s.n }

// Finish checks that only whitespace and comments follow the value read,
// and returns Err.
func (s *Scanner) Finish() error {
	if s.space() && s.n < len(s.src) {
		s.fail(invalidChar(s.src, s.n, "after top-level value"))
	}
	return s.Err()
}

func (s *Scanner) fail(e *errAt) bool {
	if s.err == nil {
		s.err = e
	}
	return false
}

// Kind skips whitespace and comments and returns the kind of the value
// that comes next, judged by its first byte; 0 after an error, at the end
// of the input, or before a byte that starts no value (reading it then
// reports the error).
func (s *Scanner) Kind() Kind {
	if s.err != nil || !s.space() || s.n >= len(s.src) {
		return 0
	}
	switch c := s.src[s.n]; {
	case c == '{':
		return Object
	case c == '[':
		return Array
	case c == '"':
		return String
	case c == 't':
		return True
	case c == 'f':
		return False
	case c == 'n':
		return Null
	case c == '-' || '0' <= c && c <= '9':
		return Number
	}
	return 0
}

// space skips whitespace and comments.
func (s *Scanner) space() bool {
	if s.n < len(s.src) && !spaceStart[s.src[s.n]] {
		return true // most often: none
	}
	return s.spaceAt()
}

// spaceStart marks the bytes that whitespace or a comment may start with.
var spaceStart = [256]bool{' ': true, '\t': true, '\r': true, '\n': true, '/': true}

func (s *Scanner) spaceAt() bool {
	b, n := s.src, s.n
	for n < len(b) {
		switch b[n] {
		case ' ':
			// Indentation comes in runs of spaces: eight at a time, and
			// the run's end found in the last eight at once.
			n++
			for n+8 <= len(b) {
				if x := binary.LittleEndian.Uint64(b[n:]) ^ spaces8; x != 0 {
					n += bits.TrailingZeros64(x) / 8
					break
				}
				n += 8
			}
		case '\t', '\r', '\n':
			n++
		case '/':
			if n+1 >= len(b) || b[n+1] != '/' && b[n+1] != '*' {
				s.n = n
				return true
			}
			if !s.comment(n) {
				return false
			}
			n = s.n
		default:
			s.n = n
			return true
		}
	}
	s.n = n
	return true
}

// comment reads the comment at n.
func (s *Scanner) comment(n int) bool {
	b := s.src
	var end int
	if b[n+1] == '/' {
		end = bytes.IndexByte(b[n:], '\n')
		if end < 0 {
			end = len(b) - n // the end of the input ends it too
		} else {
			end++
		}
	} else {
		end = bytes.Index(b[n+2:], []byte("*/"))
		if end < 0 {
			return s.fail(&errAt{n, "parsing comment: unexpected EOF"})
		}
		end += 4
	}
	if c := b[n : n+end]; !ascii(c) {
		if !utf8.Valid(c) {
			return s.fail(&errAt{n, "invalid UTF-8 in comment"})
		}
		if b[n+1] == '/' {
			if i := lineSeparator(c); i >= 0 {
				return s.fail(invalidChar(b, n+i, "in line comment"))
			}
		}
	}
	if s.extra != nil {
		*s.extra = append(*s.extra, span{n, n + end})
	}
	s.n = n + end
	return true
}

// ascii reports whether b is all ASCII.
func ascii(b []byte) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b)&highs8 != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// lineSeparator returns the index of the first U+2028 or U+2029 in b, or
// -1: JavaScript ends a line comment there.
func lineSeparator(b []byte) int {
	for i := 0; i+2 < len(b); i++ {
		if b[i] == 0xE2 && b[i+1] == 0x80 && (b[i+2] == 0xA8 || b[i+2] == 0xA9) {
			return i
		}
	}
	return -1
}

// start skips to the value the caller is about to read and checks its
// first byte: what a value cannot start with is an error.
func (s *Scanner) start() bool {
	if s.n < len(s.src) && valueStart[s.src[s.n]] {
		return true // most often: the value is there
	}
	return s.startAt()
}

// valueStart marks the bytes that a value starts with.
var valueStart = [256]bool{'{': true, '[': true, '"': true, '-': true, 't': true, 'f': true, 'n': true,
	'0': true, '1': true, '2': true, '3': true, '4': true, '5': true, '6': true, '7': true, '8': true, '9': true}

func (s *Scanner) startAt() bool {
	if !s.space() {
		return false
	}
	if s.n >= len(s.src) {
		return s.fail(&errAt{s.n, "parsing value: unexpected EOF"})
	}
	if c := s.src[s.n]; c == '}' || c == ']' {
		return s.fail(invalidChar(s.src, s.n, "at start of value"))
	}
	return true
}

// Object reads an object, calling member for each member, in order, with
// its name: the input's own bytes when the name has no escapes and is
// valid UTF-8 (the caller must not change them), else the decoded name. A
// name given twice is passed twice. member must read the member's value
// and return true to go on; it returns false to stop, after a syntax
// error. Object reports whether the whole object was read.
func (s *Scanner) Object(member func(name []byte) bool) bool {
	return s.container('{', '}', "object", func() bool {
		b := s.src
		if b[s.n] != '"' {
			// The value at s.n, with what follows it, is read as a
			// name would be; it is not one.
			at := s.n
			if s.Skip() && s.space() {
				s.fail(invalidChar(b, at, "at start of object name"))
			}
			return false
		}
		name, ok := s.Text()
		if !ok || !s.space() {
			return false
		}
		switch {
		case s.n >= len(b):
			return s.fail(&errAt{s.n, "parsing object after name: unexpected EOF"})
		case b[s.n] != ':':
			return s.fail(invalidChar(b, s.n, "after object name"))
		}
		s.size++
		s.n++
		return s.start() && member(name)
	})
}

// Array reads an array, calling elem for each element, in order, with
// its index. elem must read the element and return true to go on; it
// returns false to stop, after a syntax error. Array reports whether the
// whole array was read.
func (s *Scanner) Array(elem func(i int) bool) bool {
	count := 0
	return s.container('[', ']', "array", func() bool {
		count++
		return elem(count - 1)
	})
}

// container reads an object or an array: open, the items that item reads
// (the item at s.n, which is not the end), separated by commas, and close.
func (s *Scanner) container(open, close byte, what string, item func() bool) bool {
	if !s.start() {
		return false
	}
	b := s.src
	if b[s.n] != open {
		return s.fail(invalidChar(b, s.n, "at start of "+what))
	}
	if s.depth >= MaxDepth {
		return s.fail(invalidChar(b, s.n, "exceeded max depth"))
	}
	s.depth++
	defer func() { s.depth-- }()
	s.size++
	s.n++
	count := 0
	comma := -1 // where the last comma is
	for {
		if !s.space() {
			return false
		}
		if s.n < len(b) && b[s.n] == close { // empty, or after a trailing comma
			if count > 0 {
				s.trailingComma(comma)
			}
			s.size++
			s.n++
			return true
		}
		if s.n >= len(b) {
			return s.fail(&errAt{s.n, "parsing value: unexpected EOF"})
		}
		if (open == '[' && !s.start()) || !item() || s.err != nil || !s.space() {
			return s.fail(&errAt{s.n, "the " + what + "'s item was not read"})
		}
		count++
		switch {
		case s.n >= len(b):
			return s.fail(&errAt{s.n, "parsing " + what + " after value: unexpected EOF"})
		case b[s.n] == ',':
			s.size++
			comma = s.n
			s.n++
		case b[s.n] == close:
			s.size++
			s.n++
			return true
		default:
			return s.fail(invalidChar(b, s.n, "after "+what+" value (expecting ',' or '"+string(close)+"')"))
		}
	}
}

// trailingComma notes the comma at i that ends an object or array: it is
// not part of the value.
func (s *Scanner) trailingComma(i int) {
	s.size--
	if s.extra != nil {
		*s.extra = append(*s.extra, span{i, i + 1})
	}
}

// String reads a string.
func (s *Scanner) String() (string, bool) {
	raw, plain, ok := s.str()
	if !ok {
		return "", false
	}
	if plain {
		return string(raw[1 : len(raw)-1]), true
	}
	return unquote(raw), true
}

// Text reads a string as bytes: the input's own between the quotes when
// the string is plain (the caller must not change them, nor keep them
// longer than the input), a new slice otherwise.
func (s *Scanner) Text() ([]byte, bool) {
	raw, plain, ok := s.str()
	if !ok {
		return nil, false
	}
	if plain {
		return raw[1 : len(raw)-1], true
	}
	return []byte(unquote(raw)), true
}

// unquote decodes the checked string literal raw as encoding/json does.
func unquote(raw []byte) string {
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		panic("jsonc: a checked string does not decode: " + err.Error())
	}
	return v
}

// str reads the string literal at s.n. plain reports that it has no
// escapes and is valid UTF-8: its value is the text between its quotes.
func (s *Scanner) str() (raw []byte, plain, ok bool) {
	if !s.start() {
		return nil, false, false
	}
	b := s.src
	n0 := s.n
	if b[n0] != '"' {
		return nil, false, s.fail(invalidChar(b, n0, "at start of string"))
	}
	n := n0
	plain = true // no escape, no control character, only ASCII so far
	for n++; ; n++ {
		// Eight bytes at a time to the first that ends the string or
		// needs a closer look.
		for n+8 <= len(b) {
			w := binary.LittleEndian.Uint64(b[n:])
			if w&highs8 != 0 {
				plain = false // UTF-8, checked below
			}
			if x := stringEnds8(w); x != 0 {
				n += bits.TrailingZeros64(x) / 8
				break
			}
			n += 8
		}
		if n >= len(b) {
			return nil, false, s.fail(&errAt{n, "parsing string: unexpected EOF"})
		}
		c := b[n]
		if c == '"' {
			break
		}
		switch {
		case c == '\\':
			plain = false
			n++ // the escaped byte, checked below
		case c < 0x20, c >= utf8.RuneSelf:
			plain = false
		}
	}
	n++
	raw = b[n0:n]
	if !plain {
		if !json.Valid(raw) {
			return nil, false, s.fail(&errAt{n0, "invalid literal: " + string(raw)})
		}
		plain = bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw)
	}
	s.size += n - n0
	s.n = n
	return raw, plain, true
}

const (
	spaces8 = 0x2020202020202020 // eight spaces
	ones8   = 0x0101010101010101
	highs8  = 0x8080808080808080
)

// stringEnds8 marks the bytes of w (little-endian) that end a string or
// need a closer look: quotes, backslashes and control characters. It sets
// the high bit of the first such byte, and perhaps of later bytes; it is 0
// when there is none.
func stringEnds8(w uint64) uint64 {
	zero := func(v uint64) uint64 { return (v - ones8) &^ v & highs8 } // a zero byte
	return zero(w^(ones8*'"')) | zero(w^(ones8*'\\')) | (w-ones8*0x20)&^w&highs8
}

// literal reads the number, true, false or null at s.n: the run of
// characters that may belong to one, which must be one of them.
func (s *Scanner) literal() (lit []byte, k Kind, ok bool) {
	if !s.start() {
		return nil, 0, false
	}
	b := s.src
	n0, n := s.n, s.n
	for n < len(b) && (b[n] == '-' || b[n] == '+' || b[n] == '.' ||
		'a' <= b[n] && b[n] <= 'z' || 'A' <= b[n] && b[n] <= 'Z' || '0' <= b[n] && b[n] <= '9') {
		n++
	}
	lit = b[n0:n]
	switch string(lit) {
	case "":
		return nil, 0, s.fail(invalidChar(b, n0, "at start of value"))
	case "null":
		k = Null
	case "true":
		k = True
	case "false":
		k = False
	default:
		if !isNumber(lit) {
			return nil, 0, s.fail(&errAt{n0, "invalid literal: " + string(lit)})
		}
		k = Number
	}
	s.size += n - n0
	s.n = n
	return lit, k, true
}

// Number reads a number and returns its text.
func (s *Scanner) Number() ([]byte, bool) {
	lit, k, ok := s.literal()
	if ok && k != Number {
		return nil, s.fail(&errAt{s.n - len(lit), "not a number: " + string(lit)})
	}
	return lit, ok
}

// Bool reads true or false.
func (s *Scanner) Bool() (v, ok bool) {
	lit, k, ok := s.literal()
	if ok && k != True && k != False {
		return false, s.fail(&errAt{s.n - len(lit), "not a boolean: " + string(lit)})
	}
	return k == True, ok
}

// Null reads null.
func (s *Scanner) Null() bool {
	lit, k, ok := s.literal()
	if ok && k != Null {
		return s.fail(&errAt{s.n - len(lit), "not null: " + string(lit)})
	}
	return ok
}

// Skip reads a value of any kind and drops it.
func (s *Scanner) Skip() bool {
	if !s.start() {
		return false
	}
	switch s.src[s.n] {
	case '{':
		return s.Object(func([]byte) bool { return s.Skip() })
	case '[':
		return s.Array(func(int) bool { return s.Skip() })
	case '"':
		_, _, ok := s.str()
		return ok
	}
	_, _, ok := s.literal()
	return ok
}

// Raw reads a value of any kind and returns its input text.
func (s *Scanner) Raw() ([]byte, bool) {
	if !s.start() {
		return nil, false
	}
	from := s.n
	if !s.Skip() {
		return nil, false
	}
	return s.src[from:s.n], true
}

// Any reads a value as encoding/json decodes JSON into an any with
// UseNumber: map[string]any (a name given twice keeps its last value),
// []any, string, json.Number, bool or nil.
func (s *Scanner) Any() (any, bool) {
	if !s.start() {
		return nil, false
	}
	switch s.src[s.n] {
	case '{':
		m := map[string]any{}
		ok := s.Object(func(name []byte) bool {
			v, ok := s.Any()
			m[string(name)] = v
			return ok
		})
		return m, ok
	case '[':
		a := []any{}
		ok := s.Array(func(int) bool {
			v, ok := s.Any()
			a = append(a, v)
			return ok
		})
		return a, ok
	case '"':
		return s.String()
	}
	lit, k, ok := s.literal()
	switch k {
	case Number:
		return json.Number(lit), ok
	case True:
		return true, ok
	case False:
		return false, ok
	}
	return nil, ok
}

// Any reads src, one value with whitespace and comments around it, as
// [Scanner.Any] does.
func Any(src []byte) (any, error) {
	s := NewScanner(src)
	v, _ := s.Any()
	if err := s.Finish(); err != nil {
		return nil, err
	}
	return v, nil
}

// Standardize returns src, one value with whitespace and comments around
// it, with each comment and trailing comma replaced by spaces: JSON that
// encoding/json reads, every value at the offset it has in src.
func Standardize(src []byte) ([]byte, error) {
	var extra []span
	s := NewScanner(src)
	s.extra = &extra
	s.Skip()
	if err := s.Finish(); err != nil {
		return nil, err
	}
	b := bytes.Clone(src)
	for _, sp := range extra {
		for i := sp.start; i < sp.end; i++ {
			if b[i] != '\n' {
				b[i] = ' '
			}
		}
	}
	return b, nil
}

// isNumber reports whether s is a JSON number.
func isNumber(s []byte) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && '1' <= s[i] && s[i] <= '9':
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		d := i
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		if i == d {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		d := i
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		if i == d {
			return false
		}
	}
	return i == len(s)
}

// invalidChar reports the character at b[n].
func invalidChar(b []byte, n int, where string) *errAt {
	var what string
	r, size := utf8.DecodeRune(b[n:])
	switch {
	case r == utf8.RuneError && size == 1:
		what = fmt.Sprintf(`'\x%02x'`, b[n])
	case unicode.IsPrint(r):
		what = fmt.Sprintf(`%q`, r)
	case r <= '\uffff':
		what = fmt.Sprintf(`'\u%04x'`, r)
	default:
		what = fmt.Sprintf(`'\U%08x'`, r)
	}
	return &errAt{n, "invalid character " + what + " " + where}
}

// Seek makes s read on from off, the offset of a value of its input
// that an earlier reading of it found (see Offset), at nesting depth 0.
func (s *Scanner) Seek(off int) {
	s.n, s.depth, s.err = off, 0, nil
}
