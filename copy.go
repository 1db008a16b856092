package scheduler

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"time"
	"unicode/utf8"
)

// copyDefinition returns the deep copy of j that encoding it to JSON and
// decoding the result into a new Job gives (the form a definition is
// stored in: only its JSON members, empty members left out as their tags
// say, times without monotonic readings and with the zone JSON keeps, raw
// JSON compacted), without encoding it. ok is false when the copy must be
// made through JSON after all: j holds a value whose encoding this does not
// mirror (a type with its own MarshalJSON, an interface, invalid UTF-8, a
// time outside years 0-9999), or its JSON may be longer than MaxJobSize.
// The copy shares nothing that can change with j.
func copyDefinition(j *Job) (cp *Job, ok bool) {
	c := &copier{}
	cp = new(Job)
	if !c.value(reflect.ValueOf(cp).Elem(), reflect.ValueOf(j).Elem()) || c.size > MaxJobSize {
		return nil, false
	}
	return cp, true
}

// copyThroughJSON is copyDefinition by encoding j and decoding the result.
// It reports a definition whose JSON is longer than MaxJobSize.
func copyThroughJSON(j *Job) (*Job, error) {
	data, err := json.Marshal(j)
	if err != nil {
		return nil, &ValidationError{Path: "job", Reason: "cannot be encoded: " + err.Error()}
	}
	if len(data) > MaxJobSize {
		return nil, &ValidationError{Path: "job", Reason: fmt.Sprintf("is %d bytes, more than the limit of %d", len(data), MaxJobSize)}
	}
	cp := new(Job)
	if err := json.Unmarshal(data, cp); err != nil {
		return nil, &ValidationError{Path: "job", Reason: "cannot be decoded: " + err.Error()}
	}
	return cp, nil
}

// copier copies values as a JSON round trip would. size bounds from above
// the length of the JSON encoding of what it copied.
type copier struct{ size int }

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	zeroerType        = reflect.TypeFor[interface{ IsZero() bool }]()
	plainStructs      sync.Map // reflect.Type -> bool: no repeated member names, no tag options but omitempty and omitzero
)

var selfEncoders sync.Map // reflect.Type -> bool

// selfEncoding reports whether values of t encode themselves.
func selfEncoding(t reflect.Type) bool {
	if v, ok := selfEncoders.Load(t); ok {
		return v.(bool)
	}
	self := t.Implements(marshalerType) || t.Implements(textMarshalerType) ||
		reflect.PointerTo(t).Implements(marshalerType) || reflect.PointerTo(t).Implements(textMarshalerType)
	selfEncoders.Store(t, self)
	return self
}

// value copies src into dst, a settable zero value of the same type.
func (c *copier) value(dst, src reflect.Value) bool {
	t := src.Type()
	switch t {
	case timeType:
		tm := src.Interface().(time.Time)
		if y := tm.Year(); y < 0 || y > 9999 {
			return false
		}
		if _, off := tm.Zone(); off == 0 {
			// Encoded with "Z", decoded in UTC.
			tm = tm.Round(0).UTC()
		} else {
			var err error
			if tm, err = time.Parse(time.RFC3339Nano, tm.Format(time.RFC3339Nano)); err != nil {
				return false
			}
		}
		dst.Set(reflect.ValueOf(tm))
		c.size += len(`"2006-01-02T15:04:05.999999999-07:00"`)
		return true
	case durationType:
		dst.Set(src)
		c.size += 64
		return true
	case rawType:
		if src.Len() == 0 {
			return false // encoded as null, decoded as "null"
		}
		b := src.Bytes()
		if compactJSON(b) {
			b = append([]byte(nil), b...)
		} else {
			var err error
			if b, err = json.Marshal(json.RawMessage(b)); err != nil {
				return false
			}
		}
		dst.SetBytes(b)
		c.size += len(b)
		return true
	}
	if t.Kind() != reflect.Pointer && selfEncoding(t) {
		return false
	}
	switch t.Kind() {
	case reflect.String:
		s := src.String()
		if !c.str(s) {
			return false
		}
		dst.SetString(s)
		return true
	case reflect.Bool:
		dst.Set(src)
		c.size += len("false")
		return true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		dst.Set(src)
		c.size += len("-9223372036854775808")
		return true
	case reflect.Pointer:
		c.size += len("null")
		if src.IsNil() {
			return true
		}
		p := reflect.New(t.Elem())
		if !c.value(p.Elem(), src.Elem()) {
			return false
		}
		dst.Set(p)
		return true
	case reflect.Slice:
		c.size += len("[]")
		if src.IsNil() || t.Elem().Kind() == reflect.Uint8 {
			return src.IsNil() // a nil slice is null; bytes are base64
		}
		s := reflect.MakeSlice(t, src.Len(), src.Len())
		for i := range src.Len() {
			c.size++
			if !c.value(s.Index(i), src.Index(i)) {
				return false
			}
		}
		dst.Set(s)
		return true
	case reflect.Map:
		c.size += len("{}")
		if src.IsNil() {
			return true
		}
		if t.Key().Kind() != reflect.String || selfEncoding(t.Key()) {
			return false
		}
		m := reflect.MakeMapWithSize(t, src.Len())
		for it := src.MapRange(); it.Next(); {
			c.size += 2
			if !c.str(it.Key().String()) {
				return false
			}
			e := reflect.New(t.Elem()).Elem()
			if !c.value(e, it.Value()) {
				return false
			}
			m.SetMapIndex(it.Key(), e)
		}
		dst.Set(m)
		return true
	case reflect.Struct:
		return c.structure(dst, src, t)
	}
	return false
}

func (c *copier) structure(dst, src reflect.Value, t reflect.Type) bool {
	fields := fieldsOf(t)
	plain, known := plainStructs.Load(t)
	if !known {
		names := map[string]bool{}
		p := true
		for _, f := range fields {
			p = p && !f.other && !names[f.name]
			names[f.name] = true
		}
		plainStructs.Store(t, p)
		plain = p
	}
	if !plain.(bool) {
		return false
	}
	c.size += len("{}")
	for _, f := range fields {
		v := src.FieldByIndex(f.index)
		if f.omitEmpty && emptyValue(v) || f.omitZero && zeroValue(v) {
			continue
		}
		c.size += len(f.name) + len(`"":,`)
		if !c.value(dst.FieldByIndex(f.index), v) {
			return false
		}
	}
	return true
}

// str adds the encoded length of s, at most, to c.size; false when s is
// not valid UTF-8, which encoding replaces.
func (c *copier) str(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	n := len(s) + 2
	for i := 0; i < len(s); i++ {
		switch b := s[i]; {
		case b < 0x20, b == '"', b == '\\', b == '<', b == '>', b == '&':
			n += 5 // \u00XX at most
		case b == 0xE2:
			n += 3 // U+2028 and U+2029 become \u2028 and \u2029
		}
	}
	c.size += n
	return true
}

// compactJSON reports whether b is valid JSON that encoding/json would
// write unchanged: no whitespace to drop, nothing to escape for HTML.
func compactJSON(b []byte) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\r', '\n', '<', '>', '&', 0xE2:
			return false
		}
	}
	return json.Valid(b)
}

// emptyValue reports whether encoding/json's omitempty leaves v out.
func emptyValue(v reflect.Value) bool {
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

// zeroValue reports whether encoding/json's omitzero leaves v out.
func zeroValue(v reflect.Value) bool {
	if v.Type().Implements(zeroerType) {
		if v.Kind() == reflect.Pointer && v.IsNil() {
			return true
		}
		return v.Interface().(interface{ IsZero() bool }).IsZero()
	}
	return v.IsZero()
}
