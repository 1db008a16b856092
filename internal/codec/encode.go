package codec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"reflect"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/jobclock/scheduler/retry"
)

// Append appends the JSON of v to b, the bytes encoding/json writes for
// it: json.Marshal's when html is true, those of an Encoder with
// SetEscapeHTML(false) (without its newline) otherwise. A value encoding/json
// refuses (a time outside the years 0 to 9999, a json.RawMessage that is not
// JSON) is an error, as is a kind of value no plan writes.
func Append(b []byte, v any, html bool) ([]byte, error) {
	return appendJSON(encoder{b: b, html: html}, v)
}

// AppendUTC is Append writing every time in UTC, as the stores keep them:
// the same bytes Append writes for a copy of v with its times in UTC,
// without the copy.
func AppendUTC(b []byte, v any, html bool) ([]byte, error) {
	return appendJSON(encoder{b: b, html: html, utc: true}, v)
}

// AppendUTCWithout is AppendUTC leaving out the members of v in leave,
// which must be members of v's type (v a pointer to that struct type, or
// the struct), whatever their tags say: the JSON of a value that a store
// keeps with some of its members in columns of their own. Members of the
// values v holds are written as AppendUTC writes them.
func AppendUTCWithout(b []byte, v any, html bool, leave Members) ([]byte, error) {
	if t := reflect.TypeOf(v); leave.bits != 0 && t != leave.typ && (t.Kind() != reflect.Pointer || t.Elem() != leave.typ) {
		return b, fmt.Errorf("codec: members of %s left out of a %s", leave.typ, t)
	}
	return appendJSON(encoder{b: b, html: html, utc: true, leave: leave.bits}, v)
}

// Members is a set of the JSON members of one struct type, for
// AppendUTCWithout: made by MembersOf and joined by Add. The zero Members
// is empty.
type Members struct {
	typ  reflect.Type
	bits uint64 // bit i: the plan's field i
}

// MembersOf returns the members of struct type T's JSON called names. It
// panics on a name T's JSON has not (a program's mistake), and on a
// member past the 64th.
func MembersOf[T any](names ...string) Members {
	t := reflect.TypeFor[T]()
	p := planOf(t, nil)
	m := Members{typ: t}
	for _, name := range names {
		i := slices.IndexFunc(p.fields, func(f field) bool { return f.name == name })
		if i < 0 || i >= 64 {
			panic(fmt.Sprintf("codec: %s has no JSON member %q among its first 64", t, name))
		}
		m.bits |= 1 << i
	}
	return m
}

// Add returns the members of m and of o, which must be of m's type.
func (m Members) Add(o Members) Members {
	if m.bits == 0 {
		return o
	}
	if o.bits != 0 && o.typ != m.typ {
		panic(fmt.Sprintf("codec: members of %s added to members of %s", o.typ, m.typ))
	}
	m.bits |= o.bits
	return m
}

func appendJSON(e encoder, v any) ([]byte, error) {
	b := e.b
	rv := reflect.ValueOf(v)
	switch {
	case rv.Kind() == reflect.Pointer && rv.IsNil():
		return append(b, "null"...), nil
	case rv.Kind() == reflect.Pointer:
		rv = rv.Elem()
	default:
		// Values are read through their address: copy v to one.
		c := reflect.New(rv.Type()).Elem()
		c.Set(rv)
		rv = c
	}
	e.value(rv, planOf(rv.Type(), nil))
	if e.err != nil {
		return b, e.err
	}
	return e.b, nil
}

// Marshal is Append to a new slice, as json.Marshal writes v.
func Marshal(v any) ([]byte, error) { return Append(nil, v, true) }

type encoder struct {
	b    []byte
	html bool
	utc  bool // times in UTC
	// leave are the members the next struct written leaves out, by
	// their place in its plan (see Members); they are of the value
	// appendJSON writes.
	leave uint64
	err   error
}

func (e *encoder) fail(err error) {
	if e.err == nil {
		e.err = err
	}
}

// value writes v, which has p's type and can be addressed.
func (e *encoder) value(v reflect.Value, p *plan) {
	for range p.ptrs {
		if v.IsNil() {
			e.b = append(e.b, "null"...)
			return
		}
		v = v.Elem()
	}
	switch p.kind {
	case timeKind:
		e.time(*(*time.Time)(v.Addr().UnsafePointer()))
	case durationKind:
		e.b = appendString(e.b, retry.Duration(v.Int()).String(), e.html)
	case rawKind:
		e.raw(v.Bytes())
	case stringKind, enumKind:
		e.b = appendString(e.b, v.String(), e.html)
	case intKind:
		e.b = strconv.AppendInt(e.b, v.Int(), 10)
	case boolKind:
		e.b = strconv.AppendBool(e.b, v.Bool())
	case sliceKind:
		if v.IsNil() {
			e.b = append(e.b, "null"...)
			return
		}
		e.b = append(e.b, '[')
		for i := range v.Len() {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.value(v.Index(i), p.elem)
		}
		e.b = append(e.b, ']')
	case mapKind:
		e.mapValue(v, p)
	case structKind:
		e.b = append(e.b, '{')
		first := true
		leave := e.leave
		e.leave = 0 // the members of the value's own, not of those it holds
		for i := range p.fields {
			if i < 64 && leave&(1<<i) != 0 {
				continue
			}
			f := &p.fields[i]
			var fv reflect.Value
			if len(f.index) == 1 {
				fv = v.Field(f.index[0])
			} else if x, err := v.FieldByIndexErr(f.index); err == nil {
				fv = x
			} else {
				continue // behind a nil embedded pointer
			}
			if f.omitEmpty && empty(fv, f.plan) || f.omitZero && zero(fv) {
				continue
			}
			if !first {
				e.b = append(e.b, ',')
			}
			first = false
			if e.html {
				e.b = append(e.b, f.key[1]...)
			} else {
				e.b = append(e.b, f.key[0]...)
			}
			e.value(fv, f.plan)
		}
		e.b = append(e.b, '}')
	default:
		e.fail(fmt.Errorf("codec: cannot encode a value of type %s", p.typ))
	}
}

// time writes t as time.Time.MarshalJSON does, refusing what it refuses.
func (e *encoder) time(t time.Time) {
	if e.utc {
		t = t.UTC()
	}
	n0 := len(e.b) + 1
	e.b = append(e.b, '"')
	e.b = t.AppendFormat(e.b, time.RFC3339Nano)
	e.b = append(e.b, '"')
	b := e.b[:len(e.b)-1]
	switch {
	case b[n0+len("9999")] != '-': // the year must be four digits
		e.fail(errors.New("codec: Time.MarshalJSON: year outside of range [0,9999]"))
	case b[len(b)-1] != 'Z':
		c := b[len(b)-len("Z07:00")]
		hour := 10*(b[len(b)-len("07:00")]-'0') + b[len(b)-len("7:00")] - '0'
		if '0' <= c && c <= '9' || hour >= 24 {
			e.fail(errors.New("codec: Time.MarshalJSON: timezone hour outside of range [0,23]"))
		}
	}
}

// raw writes the raw JSON b as encoding/json writes a json.RawMessage:
// compact, and escaped for HTML when e.html.
func (e *encoder) raw(b []byte) {
	if b == nil {
		e.b = append(e.b, "null"...)
		return
	}
	if compactJSON(b, e.html) {
		e.b = append(e.b, b...)
		return
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		e.fail(fmt.Errorf("codec: a raw JSON value: %w", err))
		return
	}
	if e.html {
		var esc bytes.Buffer
		json.HTMLEscape(&esc, buf.Bytes())
		buf = esc
	}
	e.b = append(e.b, buf.Bytes()...)
}

// compactJSON reports whether b is valid JSON that encoding/json writes
// unchanged: no whitespace to drop and, when html, nothing to escape.
func compactJSON(b []byte, html bool) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\r', '\n':
			return false
		case '<', '>', '&', 0xE2:
			if html {
				return false
			}
		}
	}
	return json.Valid(b)
}

// mapValue writes a map with its keys in order, as encoding/json does.
func (e *encoder) mapValue(v reflect.Value, p *plan) {
	if v.IsNil() {
		e.b = append(e.b, "null"...)
		return
	}
	e.b = append(e.b, '{')
	if m, ok := v.Interface().(map[string]string); ok {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.b = appendString(e.b, k, e.html)
			e.b = append(e.b, ':')
			e.b = appendString(e.b, m[k], e.html)
		}
		e.b = append(e.b, '}')
		return
	}
	keys := v.MapKeys()
	slices.SortFunc(keys, func(a, b reflect.Value) int {
		switch {
		case a.String() < b.String():
			return -1
		case a.String() > b.String():
			return 1
		}
		return 0
	})
	for i, k := range keys {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.b = appendString(e.b, k.String(), e.html)
		e.b = append(e.b, ':')
		el := reflect.New(p.typ.Elem()).Elem()
		el.Set(v.MapIndex(k))
		e.value(el, p.elem)
	}
	e.b = append(e.b, '}')
}

// empty reports whether encoding/json's omitempty leaves v, of p's type,
// out.
func empty(v reflect.Value, p *plan) bool {
	if p.ptrs > 0 {
		return v.IsNil()
	}
	switch p.kind {
	case stringKind, enumKind:
		return v.Len() == 0
	case intKind, durationKind:
		return v.Int() == 0
	case boolKind:
		return !v.Bool()
	case sliceKind, mapKind, rawKind:
		return v.Len() == 0
	case timeKind, structKind:
		return false
	}
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// zero reports whether encoding/json's omitzero leaves v out: its IsZero
// method says so, or, without one, it is the zero value.
func zero(v reflect.Value) bool {
	if v.Type() == timeType {
		return (*time.Time)(v.Addr().UnsafePointer()).IsZero()
	}
	if z, ok := v.Interface().(interface{ IsZero() bool }); ok {
		return (v.Kind() != reflect.Pointer || !v.IsNil()) && z.IsZero()
	}
	return v.IsZero()
}

const hex = "0123456789abcdef"

const (
	ones8  = 0x0101010101010101
	highs8 = 0x8080808080808080
)

// load8 returns the first eight bytes of s as a little-endian word.
func load8(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// special8 marks the bytes of w (little-endian) that appendString does not
// copy as they are at once: quotes, backslashes, control characters,
// non-ASCII bytes and, when html, <, > and &. It sets the high bit of the
// first such byte, and perhaps of later bytes; it is 0 when there is none.
func special8(w uint64, html bool) uint64 {
	zero := func(v uint64) uint64 { return (v - ones8) &^ v & highs8 } // a zero byte
	x := zero(w^(ones8*'"')) | zero(w^(ones8*'\\')) | (w-ones8*0x20)&^w&highs8 | w&highs8
	if html {
		x |= zero(w^(ones8*'<')) | zero(w^(ones8*'>')) | zero(w^(ones8*'&'))
	}
	return x
}

// appendString appends s as a JSON string, escaped as encoding/json
// escapes strings: quotes, backslashes and control characters, U+2028 and
// U+2029, invalid UTF-8 as U+FFFD, and <, > and & when html.
func appendString(b []byte, s string, html bool) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		// Eight bytes at a time to the first that needs a closer look.
		for i+8 <= len(s) {
			if x := special8(load8(s[i:i+8]), html); x != 0 {
				i += bits.TrailingZeros64(x) / 8
				break
			}
			i += 8
		}
		if i >= len(s) {
			break
		}
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && (!html || c != '<' && c != '>' && c != '&') {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
