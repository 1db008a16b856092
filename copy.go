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
	if !c.value(reflect.ValueOf(cp).Elem(), reflect.ValueOf(j).Elem(), jobCopyPlan()) || c.size > MaxJobSize {
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
)

// selfEncoding reports whether values of t encode themselves.
func selfEncoding(t reflect.Type) bool {
	return t.Implements(marshalerType) || t.Implements(textMarshalerType) ||
		reflect.PointerTo(t).Implements(marshalerType) || reflect.PointerTo(t).Implements(textMarshalerType)
}

// copyKind is how copier copies a Go type.
type copyKind uint8

const (
	copyRefused copyKind = iota // through JSON instead
	copyTime
	copyDuration
	copyRaw
	copyString
	copyBool
	copyInt
	copyPointer
	copySlice
	copyBytes // a byte slice: only nil is copied (bytes are base64)
	copyMap
	copyStruct
)

// copyPlan is what copier decides about a type once, rather than on
// every copy: its kind, its element's plan, its members.
type copyPlan struct {
	kind   copyKind
	elem   *copyPlan // copyPointer, copySlice, copyMap
	fields []copyField
	badKey bool // copyMap: keys JSON does not write as they are
}

type copyField struct {
	index     []int
	nameLen   int
	omitEmpty bool
	omitZero  bool
	zeroer    bool // omitZero asks the type's IsZero
	plan      *copyPlan
}

var (
	copyPlans   = map[reflect.Type]*copyPlan{}
	copyPlansMu sync.Mutex
	jobCopyPlan = sync.OnceValue(func() *copyPlan {
		copyPlansMu.Lock()
		defer copyPlansMu.Unlock()
		return copyPlanLocked(jobType)
	})
)

func copyPlanLocked(t reflect.Type) *copyPlan {
	if p, ok := copyPlans[t]; ok {
		return p
	}
	p := &copyPlan{}
	copyPlans[t] = p // before the members: types may refer to themselves
	switch {
	case t == timeType:
		p.kind = copyTime
	case t == durationType:
		p.kind = copyDuration
	case t == rawType:
		p.kind = copyRaw
	case t.Kind() != reflect.Pointer && selfEncoding(t):
	case t.Kind() == reflect.String:
		p.kind = copyString
	case t.Kind() == reflect.Bool:
		p.kind = copyBool
	case t.Kind() == reflect.Int, t.Kind() == reflect.Int8, t.Kind() == reflect.Int16, t.Kind() == reflect.Int32, t.Kind() == reflect.Int64:
		p.kind = copyInt
	case t.Kind() == reflect.Pointer:
		p.kind, p.elem = copyPointer, copyPlanLocked(t.Elem())
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8:
		p.kind = copyBytes
	case t.Kind() == reflect.Slice:
		p.kind, p.elem = copySlice, copyPlanLocked(t.Elem())
	case t.Kind() == reflect.Map:
		p.kind, p.elem = copyMap, copyPlanLocked(t.Elem())
		p.badKey = t.Key().Kind() != reflect.String || selfEncoding(t.Key())
	case t.Kind() == reflect.Struct:
		// Only structs without repeated member names and without tag
		// options but omitempty and omitzero.
		names := map[string]bool{}
		for _, f := range fieldsOf(t) {
			if f.other || names[f.name] {
				p.fields = nil
				return p
			}
			names[f.name] = true
			p.fields = append(p.fields, copyField{index: f.index, nameLen: len(f.name), omitEmpty: f.omitEmpty,
				omitZero: f.omitZero, zeroer: f.typ.Implements(zeroerType), plan: copyPlanLocked(f.typ)})
		}
		p.kind = copyStruct
	}
	return p
}

// value copies src into dst, a settable zero value of the same type,
// whose plan p is.
func (c *copier) value(dst, src reflect.Value, p *copyPlan) bool {
	switch p.kind {
	case copyTime:
		var tm time.Time
		if src.CanAddr() {
			tm = *src.Addr().Interface().(*time.Time)
		} else {
			tm = src.Interface().(time.Time)
		}
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
		*dst.Addr().Interface().(*time.Time) = tm
		c.size += len(`"2006-01-02T15:04:05.999999999-07:00"`)
		return true
	case copyDuration:
		dst.SetInt(src.Int())
		c.size += 64
		return true
	case copyRaw:
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
	case copyString:
		s := src.String()
		if !c.str(s) {
			return false
		}
		dst.SetString(s)
		return true
	case copyBool:
		dst.SetBool(src.Bool())
		c.size += len("false")
		return true
	case copyInt:
		dst.SetInt(src.Int())
		c.size += len("-9223372036854775808")
		return true
	case copyPointer:
		c.size += len("null")
		if src.IsNil() {
			return true
		}
		n := reflect.New(src.Type().Elem())
		if !c.value(n.Elem(), src.Elem(), p.elem) {
			return false
		}
		dst.Set(n)
		return true
	case copyBytes:
		c.size += len("[]")
		return src.IsNil() // a nil slice is null; bytes are base64
	case copySlice:
		c.size += len("[]")
		if src.IsNil() {
			return true
		}
		s := reflect.MakeSlice(src.Type(), src.Len(), src.Len())
		for i := range src.Len() {
			c.size++
			if !c.value(s.Index(i), src.Index(i), p.elem) {
				return false
			}
		}
		dst.Set(s)
		return true
	case copyMap:
		c.size += len("{}")
		if src.IsNil() {
			return true
		}
		if p.badKey {
			return false
		}
		t := src.Type()
		m := reflect.MakeMapWithSize(t, src.Len())
		for it := src.MapRange(); it.Next(); {
			c.size += 2
			if !c.str(it.Key().String()) {
				return false
			}
			e := reflect.New(t.Elem()).Elem()
			if !c.value(e, it.Value(), p.elem) {
				return false
			}
			m.SetMapIndex(it.Key(), e)
		}
		dst.Set(m)
		return true
	case copyStruct:
		c.size += len("{}")
		for i := range p.fields {
			f := &p.fields[i]
			v := src.FieldByIndex(f.index)
			if f.omitEmpty && emptyValue(v) || f.omitZero && zeroValue(v, f.zeroer) {
				continue
			}
			c.size += f.nameLen + len(`"":,`)
			if !c.value(dst.FieldByIndex(f.index), v, f.plan) {
				return false
			}
		}
		return true
	}
	return false
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

// zeroValue reports whether encoding/json's omitzero leaves v out; zeroer
// says that v's type has an IsZero method.
func zeroValue(v reflect.Value, zeroer bool) bool {
	if zeroer {
		if v.Kind() == reflect.Pointer && v.IsNil() {
			return true
		}
		return v.Interface().(interface{ IsZero() bool }).IsZero()
	}
	return v.IsZero()
}
