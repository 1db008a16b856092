package codec

import (
	"encoding/json"
	"reflect"
	"time"
	"unicode/utf8"
)

// Normalize brings the value v points to to the form its JSON holds: the
// value that encoding v with json.Marshal and decoding the result into a
// new value gives. Times lose their monotonic readings and take the zone
// JSON keeps (UTC, or a fixed offset); strings get U+FFFD for each byte of
// invalid UTF-8; raw JSON becomes compact; empty lists and maps of members
// that omitempty leaves out become nil. It returns a length that the
// JSON of v is not longer than, and refused when encoding/json would
// refuse v (a time outside the years 0 to 9999, raw JSON that is not
// JSON).
func Normalize(v any) (size int, refused bool) {
	rv := reflect.ValueOf(v).Elem()
	var n normalizer
	n.value(rv, planOf(rv.Type(), nil))
	return n.size, n.refused
}

// normalizer brings a value to the form its JSON encoding decodes to,
// and bounds the length of that encoding from above.
type normalizer struct {
	size    int
	refused bool // a value encoding/json refuses
}

// Bounds of the JSON of a value besides strings and payloads.
const (
	numberSize   = len("-9223372036854775808")
	durationSize = 64
	timeSize     = len(`"2006-01-02T15:04:05.999999999-07:00"`)
)

// value normalizes v, which has p's type.
func (n *normalizer) value(v reflect.Value, p *plan) {
	for range p.ptrs {
		if v.IsNil() {
			n.size += len("null")
			return
		}
		v = v.Elem()
	}
	switch p.kind {
	case timeKind:
		// Through a pointer, which an interface holds without an
		// allocation (v is addressable: Normalize starts from a pointer).
		tp := v.Addr().Interface().(*time.Time)
		t, ok := jsonTime(*tp)
		n.refused = n.refused || !ok
		*tp = t
		n.size += timeSize
	case durationKind:
		n.size += durationSize
	case rawKind:
		b := v.Bytes()
		if len(b) > 0 && !compactJSON(b, true) {
			var err error
			if b, err = json.Marshal(json.RawMessage(b)); err != nil {
				n.refused = true
				return
			}
		}
		if len(b) == 0 {
			b = nil
		}
		v.SetBytes(b)
		n.size += len(b) + len("null")
	case stringKind, enumKind:
		s := validUTF8(v.String())
		v.SetString(s)
		n.size += quotedSize(s)
	case intKind:
		n.size += numberSize
	case boolKind:
		n.size += len("false")
	case sliceKind:
		n.size += len("[]")
		for i := range v.Len() {
			n.value(v.Index(i), p.elem)
			n.size++
		}
	case mapKind:
		n.size += len("{}")
		if v.Len() == 0 {
			return
		}
		m := reflect.MakeMapWithSize(p.typ, v.Len())
		for it := v.MapRange(); it.Next(); {
			k := validUTF8(it.Key().String())
			e := reflect.New(p.typ.Elem()).Elem()
			e.Set(it.Value())
			n.value(e, p.elem)
			m.SetMapIndex(reflect.ValueOf(k).Convert(p.typ.Key()), e)
			n.size += quotedSize(k) + len(":,")
		}
		v.Set(m)
	case structKind:
		n.size += len("{}")
		for _, h := range p.hidden {
			if hv, err := v.FieldByIndexErr(h); err == nil {
				hv.SetZero()
			}
		}
		for i := range p.fields {
			f := &p.fields[i]
			fv, err := v.FieldByIndexErr(f.index)
			if err != nil {
				continue // behind a nil embedded pointer: left out
			}
			if f.omitEmpty && (f.plan.kind == sliceKind || f.plan.kind == mapKind || f.plan.kind == rawKind) && f.plan.ptrs == 0 && fv.Len() == 0 {
				fv.SetZero() // left out, decoded as nil
				continue
			}
			n.size += len(f.name) + len(`"":,`)
			n.value(fv, f.plan)
		}
		for _, e := range p.embedded {
			if ev, err := v.FieldByIndexErr(e); err == nil && !ev.IsNil() && ev.Elem().IsZero() {
				ev.SetZero() // writes nothing, so decodes to nil
			}
		}
	}
}

// jsonTime returns t as its JSON encoding decodes: without a monotonic
// reading, in UTC when its offset is zero, else at a fixed offset (or in
// Local, when Local has that offset then, as time.Parse does). ok is false
// for a year outside 0-9999, which encoding refuses.
func jsonTime(t time.Time) (_ time.Time, ok bool) {
	if y := t.Year(); y < 0 || y > 9999 {
		return t, false
	}
	if _, off := t.Zone(); off == 0 {
		return t.Round(0).UTC(), true
	}
	t, err := time.Parse(time.RFC3339Nano, t.Format(time.RFC3339Nano))
	return t, err == nil
}

// validUTF8 returns s with each byte that is not part of valid UTF-8
// replaced by U+FFFD, as encoding/json writes it.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	b := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = utf8.AppendRune(b, utf8.RuneError)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return string(b)
}

// quotedSize bounds the length of s as a JSON string from above.
func quotedSize(s string) int {
	n := len(s) + len(`""`)
	for i := 0; i < len(s); i++ {
		switch b := s[i]; {
		case b < 0x20, b == '"', b == '\\', b == '<', b == '>', b == '&':
			n += len(`\u00XX`) - 1
		case b == 0xE2:
			n += len(`\u2028`) - 3 // U+2028 and U+2029 are written escaped
		}
	}
	return n
}
