package codec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/jobclock/scheduler/internal/jsonc"
	"github.com/jobclock/scheduler/internal/jsonpath"
	"github.com/jobclock/scheduler/internal/suggest"
	"github.com/jobclock/scheduler/retry"
)

// Decoder reads JSON into Go values in one pass, with Scanner, by the
// values' plans under Rules. It reads each value once, as it comes, and
// checks it against the type it is read into: a value of the wrong kind,
// an unknown member, a member given twice, a time or duration that does
// not parse is recorded as a Problem at its JSON path, dropped, and
// reading goes on. A member (or a map's key) given again with the same
// name is reported and its value skipped: the first counts. Of two
// spellings of one member (in different cases, or an alias) the one first
// in byte order counts and the other is reported as its duplicate; the
// problems of a value that does not count are dropped.
//
// A syntax error ends the reading: Scanner.Err reports it, and Problems
// found before it do not matter.
type Decoder struct {
	Scanner jsonc.Scanner
	// Rules are those of the values read; nil means none.
	Rules *Rules
	// Problems are the problems found, in the order found; those of
	// values that no longer count are marked Dropped.
	Problems []Problem
	// path is the path of the value being read, made into a string only
	// for a problem.
	path []segment
	// lastNumber is the text of the integer read last.
	lastNumber []byte
}

// Problem is a problem with a value read.
type Problem struct {
	// Path is the JSON path of the value, Value its JSON text (empty for
	// a problem with a member's name, or a secret's value) and Reason
	// what is wrong.
	Path, Value, Reason string
	// Refs are the paths of the other values that Reason names (where
	// an unknown member belongs), from the top as Path is, each written
	// in Reason as here.
	Refs []string
	// Name marks a problem with a member's name (unknown, given twice):
	// at one path it comes before one with the member's value.
	Name bool
	// Dropped marks a problem of a value that no longer counts.
	Dropped bool
}

// segment is a member name, or an array index (when index >= 0).
type segment struct {
	name  string
	index int
}

// Reset makes d read data from its start, with no problems and at the top
// of the path.
func (d *Decoder) Reset(data []byte) {
	d.Scanner.Reset(data)
	d.Problems = d.Problems[:0]
	if d.path == nil {
		d.path = make([]segment, 0, 8)
	}
	d.path = d.path[:0]
}

// Push makes name the member whose value is read next, under the path of
// what is read now; Pop undoes it.
func (d *Decoder) Push(name string) { d.path = append(d.path, segment{name, -1}) }

// Pop undoes the last Push.
func (d *Decoder) Pop() { d.path = d.path[:len(d.path)-1] }

// Path returns the path of the value being read.
func (d *Decoder) Path() string {
	var b strings.Builder
	for _, s := range d.path {
		if s.index >= 0 {
			b.WriteString("[" + strconv.Itoa(s.index) + "]")
			continue
		}
		k := jsonpath.Key(b.String(), s.name)
		b.Reset()
		b.WriteString(k)
	}
	return b.String()
}

// Add records a problem with a value.
func (d *Decoder) Add(path, value, reason string) {
	d.Problems = append(d.Problems, Problem{Path: path, Value: value, Reason: reason})
}

// AddName records a problem with a member's name; refs are the paths
// reason names (see Problem.Refs).
func (d *Decoder) AddName(path, reason string, refs ...string) {
	d.Problems = append(d.Problems, Problem{Path: path, Reason: reason, Refs: refs, Name: true})
}

// Drop marks the problems recorded since from and before to as dropped:
// those of a value that no longer counts.
func (d *Decoder) Drop(from, to int) {
	for i := from; i < to; i++ {
		d.Problems[i].Dropped = true
	}
}

// mismatch reads the value that comes next, which is not what p reads,
// and records a problem with it.
func (d *Decoder) mismatch(reason string) {
	if v, ok := d.Scanner.Any(); ok {
		d.Add(d.Path(), jsonpath.Text(v), reason)
	}
}

// Value reads the value that comes next into v, which must be settable,
// and reports whether it set v: not for null, nor for a value it reported
// as a problem.
func (d *Decoder) Value(v reflect.Value) bool {
	return d.value(v, planOf(v.Type(), d.Rules))
}

// value reads the value that comes next into v, which has p's type.
func (d *Decoder) value(v reflect.Value, p *plan) bool {
	s := &d.Scanner
	k := s.Kind()
	if k == jsonc.Null {
		s.Null()
		return false
	}
	if p.ptrs == 0 {
		return d.direct(v, p, k)
	}
	target := reflect.New(p.typ)
	if !d.direct(target.Elem(), p, k) {
		return false
	}
	for range p.ptrs - 1 {
		ptr := reflect.New(target.Type())
		ptr.Elem().Set(target)
		target = ptr
	}
	v.Set(target)
	return true
}

// direct is value for a v of p.typ itself, the next value being of kind
// k.
func (d *Decoder) direct(v reflect.Value, p *plan, k jsonc.Kind) bool {
	s := &d.Scanner
	switch p.kind {
	case timeKind:
		if k != jsonc.String {
			d.mismatch(`is not a time; use an ISO 8601 string such as "2012-08-04T00:00Z"`)
			return false
		}
		b, ok := s.Text()
		if !ok {
			return false
		}
		// The forms the stores write are read from the input itself, which
		// parseTimeUTC only reads; the others from a string of their own.
		t, ok := parseTimeUTC(unsafe.String(unsafe.SliceData(b), len(b)))
		if !ok {
			str := string(b)
			var err error
			if t, err = parseTimeLayouts(str); err != nil {
				reason := timeReason(str)
				if reason == "" {
					reason = `is not a time; use ISO 8601 such as "2012-08-04T00:00Z" or "2012-11-04"`
				}
				d.Add(d.Path(), jsonpath.Text(str), reason)
				return false
			}
		}
		if v.CanSet() {
			// Not through an interface, which would copy t to the heap.
			*(*time.Time)(v.Addr().UnsafePointer()) = t
		} else {
			v.Set(reflect.ValueOf(t))
		}
	case durationKind:
		if k != jsonc.String {
			d.mismatch(`is not a duration; use an ISO 8601 string such as "PT30S"`)
			return false
		}
		str, ok := s.String()
		if !ok {
			return false
		}
		dur, err := retry.ParseDuration(str)
		if err != nil {
			d.Add(d.Path(), jsonpath.Text(str), strings.TrimPrefix(err.Error(), strconv.Quote(str)+" "))
			return false
		}
		if dur <= 0 {
			d.Add(d.Path(), jsonpath.Text(str), "is not longer than zero")
			return false
		}
		v.SetInt(int64(dur))
	case rawKind:
		if d.Rules != nil && d.Rules.RawAsGiven {
			raw, ok := s.Raw()
			v.SetBytes(bytes.Clone(raw))
			return ok
		}
		// Compact, with members in order, as encoding/json writes the
		// value: the form a payload is stored in.
		var x any
		d.value(reflect.ValueOf(&x).Elem(), planOf(anyType, d.Rules))
		if s.Err() != nil {
			return false
		}
		b, err := json.Marshal(x)
		if err != nil {
			d.Add(d.Path(), jsonpath.Text(x), "cannot be encoded: "+err.Error())
			return false
		}
		v.SetBytes(b)
	case anyKind:
		var x reflect.Value
		switch k {
		case jsonc.Object:
			x = reflect.New(anyMapType).Elem()
		case jsonc.Array:
			x = reflect.New(anySliceType).Elem()
		default:
			a, ok := s.Any()
			if ok {
				v.Set(reflect.ValueOf(a))
			}
			return ok
		}
		ok := d.direct(x, planOf(x.Type(), d.Rules), k)
		v.Set(x)
		return ok
	case stringKind:
		if k != jsonc.String {
			d.mismatch("is not a string")
			return false
		}
		str, ok := s.String()
		if !ok {
			return false
		}
		v.SetString(str)
	case enumKind:
		if k != jsonc.String {
			d.mismatch("is not a string")
			return false
		}
		raw, ok := s.Raw()
		if !ok {
			return false
		}
		if err := v.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(raw); err != nil {
			d.Add(d.Path(), jsonpath.Abbreviate(string(raw)), "cannot be decoded: "+err.Error())
			return false
		}
	case intKind:
		if k != jsonc.Number {
			d.mismatch("is not an integer")
			return false
		}
		lit, ok := s.Number()
		if !ok {
			return false
		}
		d.lastNumber = lit
		x, err := parseInt(lit, p.typ.Bits())
		if err != nil {
			reason := "is not an integer"
			if errors.Is(err, strconv.ErrRange) {
				reason = "is out of range"
			}
			d.Add(d.Path(), jsonpath.Text(json.Number(lit)), reason)
			return false
		}
		v.SetInt(x)
	case boolKind:
		if k != jsonc.True && k != jsonc.False {
			d.mismatch("is not a boolean (true or false)")
			return false
		}
		b, ok := s.Bool()
		if !ok {
			return false
		}
		v.SetBool(b)
	case sliceKind:
		if k != jsonc.Array {
			d.mismatch("is not an array")
			return false
		}
		v.SetLen(0)
		ok := s.Array(func(i int) bool {
			// A bad element stays the zero value, so the indexes of
			// later elements stay right.
			if i == v.Cap() {
				v.Grow(max(i, 4)) // lists are short: room for four at first
			}
			v.SetLen(i + 1)
			d.path = append(d.path, segment{index: i})
			d.value(v.Index(i), p.elem)
			d.path = d.path[:len(d.path)-1]
			return true
		})
		if v.IsNil() {
			v.Set(reflect.MakeSlice(p.typ, 0, 0)) // [] is an empty slice, not nil
		}
		return ok
	case mapKind:
		if k != jsonc.Object {
			d.mismatch("is not an object")
			return false
		}
		if p.typ == stringMapType {
			m := map[string]string{}
			ok := d.stringMap(m)
			v.Set(reflect.ValueOf(m))
			return ok
		}
		return d.mapValue(v, p)
	case structKind:
		if k != jsonc.Object {
			d.mismatch("is not an object")
			return false
		}
		var st Struct
		st.init(v, p)
		ok := s.Object(func(name []byte) bool { return d.Member(&st, name) })
		d.EndStruct(&st)
		return ok
	default:
		d.mismatch(fmt.Sprintf("has unsupported type %s", p.typ))
		return false
	}
	return true
}

// parseInt is strconv.ParseInt(string(lit), 10, bits) for the JSON number
// lit, without a string for the short ones.
func parseInt(lit []byte, bits int) (int64, error) {
	if len(lit) > 0 && len(lit) <= 18 {
		neg, digits := false, lit
		if digits[0] == '-' {
			neg, digits = true, digits[1:]
		}
		var x int64
		for _, c := range digits {
			if c < '0' || c > '9' {
				return strconv.ParseInt(string(lit), 10, bits) // a fraction or an exponent
			}
			x = x*10 + int64(c-'0')
		}
		if neg {
			x = -x
		}
		if bits >= 64 || x>>(bits-1) == 0 || x>>(bits-1) == -1 {
			return x, nil
		}
	}
	return strconv.ParseInt(string(lit), 10, bits)
}

// mapValue reads an object into the map v. A key given again is
// reported, its value skipped: the first counts.
func (d *Decoder) mapValue(v reflect.Value, p *plan) bool {
	m := reflect.MakeMap(p.typ)
	var buf [8]string
	seen := buf[:0]
	ok := d.Scanner.Object(func(nb []byte) bool {
		var name string
		var dup bool
		if seen, name, dup = d.again(seen, nb); dup {
			return d.Scanner.Skip()
		}
		key := reflect.ValueOf(name).Convert(p.typ.Key())
		d.path = append(d.path, segment{name, -1})
		e := reflect.New(p.typ.Elem()).Elem()
		if d.value(e, p.elem) || p.elem.kind == anyKind { // an any keeps null
			m.SetMapIndex(key, e)
		}
		d.path = d.path[:len(d.path)-1]
		return d.Scanner.Err() == nil
	})
	v.Set(m)
	return ok
}

// again returns seen, the names of the members of the object being read
// that came before the one called nb, with nb's added, nb as a string, and
// whether it came before: then it records the problem, the first time
// only.
func (d *Decoder) again(seen []string, nb []byte) ([]string, string, bool) {
	for i, name := range seen {
		if name == string(nb) {
			if !slices.Contains(seen[i+1:], name) { // reported once
				seen = append(seen, name)
				d.AddName(jsonpath.Key(d.Path(), name), duplicate(name, name))
			}
			return seen, name, true
		}
	}
	name := string(nb)
	return append(seen, name), name, false
}

// stringMap reads an object into m: headers and message properties,
// without reflection for each member. A key given again is reported, its
// value skipped: the first counts.
func (d *Decoder) stringMap(m map[string]string) bool {
	var buf [8]string
	seen := buf[:0]
	s := &d.Scanner
	return s.Object(func(nb []byte) bool {
		var name string
		var dup bool
		if seen, name, dup = d.again(seen, nb); dup {
			return s.Skip()
		}
		switch s.Kind() {
		case jsonc.Null:
			s.Null() // left out
		case jsonc.String:
			if str, ok := s.String(); ok {
				m[name] = str
			}
		default:
			d.path = append(d.path, segment{name, -1})
			d.mismatch("is not a string")
			d.path = d.path[:len(d.path)-1]
		}
		return s.Err() == nil
	})
}

// Struct is the state of a struct being read member by member: see
// Decoder.Member. It belongs on its reader's stack.
type Struct struct {
	v       reflect.Value
	p       *plan
	buf     [16]matched
	more    []matched // for a struct of more members than buf holds
	unknown []string
}

// field returns what st knows of field f.
func (st *Struct) field(f int) *matched {
	if st.more != nil {
		return &st.more[f]
	}
	return &st.buf[f]
}

// matched is what a Struct knows of the member that counts for a field.
type matched struct {
	name     []byte    // as given
	from, to int32     // the problems of its value
	others   *[][]byte // the other spellings given, duplicates
}

// StartStruct readies st to read the members of the struct v (settable),
// one Member call each, then EndStruct.
func (d *Decoder) StartStruct(st *Struct, v reflect.Value) {
	st.init(v, planOf(v.Type(), d.Rules))
}

func (st *Struct) init(v reflect.Value, p *plan) {
	st.v, st.p = v, p
	if len(p.fields) > len(st.buf) {
		st.more = make([]matched, len(p.fields))
	}
}

// Member reads the value of the member called name, which comes next,
// into the struct of st, and reports whether reading goes on (false after
// a syntax error).
func (d *Decoder) Member(st *Struct, name []byte) bool {
	s, p := &d.Scanner, st.p
	f, ok := p.exact[string(name)]
	if !ok {
		lower := strings.ToLower(string(name))
		if p.ignored[lower] {
			return s.Skip()
		}
		as := string(name)
		if a, ok := p.aliases[lower]; ok {
			as = a
		}
		f = slices.IndexFunc(p.fields, func(f field) bool { return strings.EqualFold(f.name, as) })
	}
	if f < 0 {
		if d.Rules != nil && d.Rules.SkipUnknown {
			return s.Skip()
		}
		if n := string(name); !slices.Contains(st.unknown, n) {
			st.unknown = append(st.unknown, n)
			path := d.Path()
			hint, refs := p.misplaced(path, n)
			d.AddName(jsonpath.Key(path, n), "unknown field"+hint, refs...)
		}
		return s.Skip()
	}
	m := st.field(f)
	fv := fieldOf(st.v, p.fields[f].index)
	if m.name != nil {
		if m.others == nil {
			m.others = new([][]byte)
		}
		if c := bytes.Compare(name, m.name); c >= 0 {
			// The same name again, or a spelling later in order: the
			// value read counts, this one is a duplicate.
			*m.others = append(*m.others, name)
			return s.Skip()
		}
		// First in order: it counts, the other is a duplicate.
		*m.others = append(*m.others, m.name)
		m.name = name
		d.Drop(int(m.from), int(m.to))
		fv.SetZero()
	}
	m.name = name
	m.from = int32(len(d.Problems))
	d.field(fv, &p.fields[f])
	m.to = int32(len(d.Problems))
	return s.Err() == nil
}

// AddUnknown records that the struct type t, read at path, has no member
// called name, as Member does: with where such a member belongs, or the
// members close to it.
func (d *Decoder) AddUnknown(path string, t reflect.Type, name string) {
	hint, refs := planOf(t, d.Rules).misplaced(path, name)
	d.AddName(jsonpath.Key(path, name), "unknown field"+hint, refs...)
}

// misplaced returns what to add to "unknown field" for a member name
// that the struct of p does not have, at path: where a member of that name
// belongs (", it belongs in recurrence.schedule") when a struct member of
// p has one, or else the members of p close to it (see package suggest);
// and the paths it names.
func (p *plan) misplaced(path, name string) (string, []string) {
	var under []string
	names := make([]string, 0, len(p.fields))
	for _, f := range p.fields {
		if p.ignored[strings.ToLower(f.name)] {
			continue
		}
		names = append(names, f.name)
		if c := f.plan; c.kind == structKind && slices.ContainsFunc(c.fields, func(g field) bool {
			return strings.EqualFold(g.name, name) && !c.ignored[strings.ToLower(g.name)]
		}) {
			under = append(under, jsonpath.Key(path, f.name))
		}
	}
	if len(under) > 0 {
		return ", it belongs in " + suggest.Or(under, func(s string) string { return s }), under
	}
	return suggest.DidYouMean(name, names), nil
}

// EndStruct records, after the members of st, the spellings of members
// that did not count.
func (d *Decoder) EndStruct(st *Struct) {
	for f := range st.p.fields {
		m := st.field(f)
		if m.others == nil {
			continue
		}
		others := *m.others
		slices.SortFunc(others, bytes.Compare)
		for _, o := range slices.CompactFunc(others, bytes.Equal) {
			d.AddName(jsonpath.Key(d.Path(), string(o)), duplicate(string(o), string(m.name)))
		}
	}
}

// duplicate returns the reason of a member called name whose value does
// not count, the member called counts being the one that does.
func duplicate(name, counts string) string {
	if name == counts {
		return "is given more than once"
	}
	return fmt.Sprintf("is a duplicate of %q", counts)
}

// field reads the value of member f into fv.
func (d *Decoder) field(fv reflect.Value, f *field) {
	d.path = append(d.path, segment{f.name, -1})
	before := len(d.Problems)
	if f.positive && f.plan.kind == intKind && f.plan.ptrs == 0 {
		// Zero means absent in Go: a zero given is refused.
		if d.value(fv, f.plan) && fv.Int() == 0 {
			fv.SetZero()
			d.Add(d.Path(), jsonpath.Text(json.Number(d.lastNumber)), "must be at least 1")
		}
	} else {
		d.value(fv, f.plan)
	}
	if f.secret {
		for i := before; i < len(d.Problems); i++ {
			d.Problems[i].Value = ""
		}
	}
	d.path = d.path[:len(d.path)-1]
}

// Unmarshal reads data, one JSON value with comments allowed, into the
// value v points to, as encoding/json reads what the program wrote itself:
// members v does not have are skipped and raw JSON is kept as given. A
// syntax error, or the first problem found, is its error.
func Unmarshal(data []byte, v any) error {
	d := decoders.Get().(*Decoder)
	d.Rules = stored
	d.Reset(data)
	d.Value(reflect.ValueOf(v).Elem())
	err := d.firstError()
	d.Scanner.Reset(nil) // keeps nothing of data
	clear(d.Problems)
	d.Problems, d.lastNumber = d.Problems[:0], nil
	decoders.Put(d)
	return err
}

// decoders are Unmarshal's Decoders, reused: a claim of a job from an SQL
// store decodes three of its values, and a Decoder each made the slice of
// its path anew.
var decoders = sync.Pool{New: func() any { return new(Decoder) }}

// firstError returns Unmarshal's error: the syntax error, or the first
// problem that counts.
func (d *Decoder) firstError() error {
	if err := d.Scanner.Finish(); err != nil {
		return err
	}
	for _, p := range d.Problems {
		if !p.Dropped {
			if p.Value == "" {
				return fmt.Errorf("codec: %s: %s", p.Path, p.Reason)
			}
			return fmt.Errorf("codec: %s: %s %s", p.Path, p.Value, p.Reason)
		}
	}
	return nil
}

// fieldOf returns the field of struct v at index, allocating the structs
// that nil embedded pointers on the way lead to, as encoding/json does.
func fieldOf(v reflect.Value, index []int) reflect.Value {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v
}
