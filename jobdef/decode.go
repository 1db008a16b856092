package jobdef

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

	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/internal/jsonc"
	"github.com/jobclock/scheduler/internal/jsonpath"
	"github.com/jobclock/scheduler/recurrence"
	"github.com/jobclock/scheduler/retry"
)

// The decoder reads a parsed definition (a jsonc tree) into a Job in one
// walk, by the Go types' own description: their exported fields and json
// tags, as encoding/json reads them. It reports every value of the wrong
// kind, every unknown member and every member given twice (in any case) at
// its path, drops what it reports, and reads on, so that one pass finds
// every problem. On top of the tags, a few members have rules of their
// own, kept in the tables below: other spellings they are known by,
// members accepted and dropped, members whose values errors never show,
// and integers that must be at least 1 when given.

var (
	jobType         = reflect.TypeFor[Job]()
	timeType        = reflect.TypeFor[time.Time]()
	durationType    = reflect.TypeFor[retry.Duration]()
	rawType         = reflect.TypeFor[json.RawMessage]()
	stringMapType   = reflect.TypeFor[map[string]string]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
)

// positiveFields are integer members that, when given, must be at least 1
// (their zero value in Go means "absent").
var positiveFields = map[reflect.Type]map[string]bool{
	reflect.TypeFor[recurrence.Recurrence](): {"interval": true, "count": true},
}

// ignoredFields are members, by their lower-case name, accepted and
// dropped on input.
var ignoredFields = map[reflect.Type]map[string]bool{
	jobType: {"status": true},
}

// secretFields are members whose values errors never show.
var secretFields = map[string]bool{"password": true, "pfx": true, "secret": true, "sasKey": true, "sasToken": true}

// fieldAliases maps other spellings of a member (lower case) to its JSON
// name: names of the 2014-08-01-preview API and of the authentication
// documentation, and Azure Logic Apps' names of the retry policy members.
var fieldAliases = map[reflect.Type]map[string]string{
	reflect.TypeFor[action.Authentication](): {"certificateexpiration": "certificateExpirationDate"},
	reflect.TypeFor[action.HTTPRequest]():    {"httpauthentication": "authentication"},
	reflect.TypeFor[retry.Policy]():          {"type": "retryType", "count": "retryCount", "interval": "retryInterval"},
}

// kind is how the decoder reads a Go type.
type kind uint8

const (
	unsupported  kind = iota
	timeKind          // time.Time, from an ISO 8601 string (ParseTime)
	durationKind      // retry.Duration, from an ISO 8601 string
	rawKind           // json.RawMessage: any JSON, kept in compact form
	stringKind
	enumKind // a string type with its own UnmarshalJSON
	intKind
	boolKind
	sliceKind
	mapKind // with string keys
	structKind
)

// plan is how the decoder reads one Go type, made once per type.
type plan struct {
	kind kind
	typ  reflect.Type // the type behind ptrs pointers
	ptrs int
	elem *plan // slices and maps
	// structKind:
	fields  []field
	exact   map[string]int    // JSON name -> field, except ignored names
	aliases map[string]string // see fieldAliases
	ignored map[string]bool   // see ignoredFields
}

// field is a member of a struct.
type field struct {
	name             string // as encoding/json names it
	index            []int  // for reflect.Value.FieldByIndex
	plan             *plan
	omitEmpty        bool // the tag's omitempty
	secret, positive bool
}

var (
	plansMu sync.Mutex
	plans   = map[reflect.Type]*plan{}
)

// planOf returns the plan of t.
func planOf(t reflect.Type) *plan {
	plansMu.Lock()
	defer plansMu.Unlock()
	return planLocked(t)
}

func planLocked(t reflect.Type) *plan {
	if p, ok := plans[t]; ok {
		return p
	}
	p := &plan{}
	plans[t] = p // before the members: a type may refer to itself
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
		p.ptrs++
	}
	p.typ = t
	switch {
	case t == timeType:
		p.kind = timeKind
	case t == durationType:
		p.kind = durationKind
	case t == rawType:
		p.kind = rawKind
	case t.Kind() == reflect.String && reflect.PointerTo(t).Implements(unmarshalerType):
		p.kind = enumKind
	case t.Kind() == reflect.String:
		p.kind = stringKind
	case t.Kind() == reflect.Int, t.Kind() == reflect.Int64, t.Kind() == reflect.Int32:
		p.kind = intKind
	case t.Kind() == reflect.Bool:
		p.kind = boolKind
	case t.Kind() == reflect.Slice:
		p.kind, p.elem = sliceKind, planLocked(t.Elem())
	case t.Kind() == reflect.Map && t.Key().Kind() == reflect.String:
		p.kind, p.elem = mapKind, planLocked(t.Elem())
	case t.Kind() == reflect.Struct:
		p.kind = structKind
		p.ignored, p.aliases = ignoredFields[t], fieldAliases[t]
		p.exact = map[string]int{}
		fields := jsonFields(t)
		if len(fields) > 32 {
			panic(fmt.Sprintf("jobdef: %s has %d JSON members, more than the decoder's 32", t, len(fields)))
		}
		for _, f := range fields {
			if !p.ignored[strings.ToLower(f.name)] {
				p.exact[f.name] = len(p.fields)
			}
			f.plan = planLocked(f.typ)
			p.fields = append(p.fields, field{name: f.name, index: f.index, plan: f.plan, omitEmpty: f.omitEmpty,
				secret: secretFields[f.name], positive: positiveFields[t][f.name]})
		}
	}
	return p
}

// jsonField is a member of a struct as encoding/json sees it.
type jsonField struct {
	name      string
	typ       reflect.Type
	index     []int
	plan      *plan
	omitEmpty bool
}

// jsonFields lists the JSON members of struct type t in declaration
// order, those of embedded structs in their place.
func jsonFields(t reflect.Type) []jsonField {
	var out []jsonField
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			for _, e := range jsonFields(f.Type) {
				e.index = append([]int{i}, e.index...)
				out = append(out, e)
			}
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		omit := slices.Contains(strings.Split(opts, ","), "omitempty")
		out = append(out, jsonField{name: name, typ: f.Type, index: f.Index, omitEmpty: omit})
	}
	return out
}

// decoder reads a definition from a scanner into Go values, recording
// problems. It reads each value once, as it comes: a member given twice
// keeps its last value, and of two spellings of one member (in different
// cases) the one first in byte order counts, the other is a duplicate; the
// problems of a value that does not count are dropped.
type decoder struct {
	problems
	s jsonc.Scanner
	// path is the path of the value being read, made into a string only
	// for a problem.
	path []segment
	// envelope is set when a member of the top-level object is named
	// "properties" (in any case): the definition is an ARM envelope and
	// must be read as one. When that member comes first, as it most
	// often does, root holds every member of the top-level object.
	envelope bool
	root     []rootMember
	// props is the job read from the properties object of an envelope
	// that starts with it, propsAt where that object starts, and
	// propsFrom and propsTo the span of its problems.
	props              *Job
	propsAt            int
	propsFrom, propsTo int
	// lastNumber is the text of the integer read last.
	lastNumber []byte
}

// segment is a member name, or an array index (when index >= 0).
type segment struct {
	name  string
	index int
}

// pathString returns the path of the value being read.
func (d *decoder) pathString() string {
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

// mismatch reads the value that comes next, which is not what p reads, and
// records a problem with it.
func (d *decoder) mismatch(reason string) {
	if v, ok := d.s.Any(); ok {
		d.add(d.pathString(), jsonpath.Text(v), reason)
	}
}

// value reads the value that comes next into v, which has p's type, and
// reports whether it set v: not for null, nor for a value it reported as
// a problem.
func (d *decoder) value(v reflect.Value, p *plan) bool {
	k := d.s.Kind()
	if k == jsonc.Null {
		d.s.Null()
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
func (d *decoder) direct(v reflect.Value, p *plan, k jsonc.Kind) bool {
	switch p.kind {
	case timeKind:
		if k != jsonc.String {
			d.mismatch(`is not a time; use an ISO 8601 string such as "2012-08-04T00:00Z"`)
			return false
		}
		s, ok := d.s.String()
		if !ok {
			return false
		}
		t, err := ParseTime(s)
		if err != nil {
			d.add(d.pathString(), jsonpath.Text(s), `is not a time; use ISO 8601 such as "2012-08-04T00:00Z" or "2012-11-04"`)
			return false
		}
		v.Set(reflect.ValueOf(t))
	case durationKind:
		if k != jsonc.String {
			d.mismatch(`is not a duration; use an ISO 8601 string such as "PT30S"`)
			return false
		}
		s, ok := d.s.String()
		if !ok {
			return false
		}
		dur, err := retry.ParseDuration(s)
		if err != nil {
			d.add(d.pathString(), jsonpath.Text(s), strings.TrimPrefix(err.Error(), strconv.Quote(s)+" "))
			return false
		}
		if dur <= 0 {
			d.add(d.pathString(), jsonpath.Text(s), "is not longer than zero")
			return false
		}
		v.SetInt(int64(dur))
	case rawKind:
		// Compact, with members in order, as encoding/json writes the
		// value: the form a payload is stored in.
		x, ok := d.s.Any()
		if !ok {
			return false
		}
		b, err := json.Marshal(x)
		if err != nil {
			d.add(d.pathString(), jsonpath.Text(x), "cannot be encoded: "+err.Error())
			return false
		}
		v.SetBytes(b)
	case stringKind:
		if k != jsonc.String {
			d.mismatch("is not a string")
			return false
		}
		s, ok := d.s.String()
		if !ok {
			return false
		}
		v.SetString(s)
	case enumKind:
		if k != jsonc.String {
			d.mismatch("is not a string")
			return false
		}
		raw, ok := d.s.Raw()
		if !ok {
			return false
		}
		if err := v.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(raw); err != nil {
			d.add(d.pathString(), jsonpath.Abbreviate(string(raw)), "cannot be decoded: "+err.Error())
			return false
		}
	case intKind:
		if k != jsonc.Number {
			d.mismatch("is not an integer")
			return false
		}
		lit, ok := d.s.Number()
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
			d.add(d.pathString(), jsonpath.Text(json.Number(lit)), reason)
			return false
		}
		v.SetInt(x)
	case boolKind:
		if k != jsonc.True && k != jsonc.False {
			d.mismatch("is not a boolean (true or false)")
			return false
		}
		b, ok := d.s.Bool()
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
		ok := d.s.Array(func(i int) bool {
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
		return d.mapValue(v, p)
	case structKind:
		if k != jsonc.Object {
			d.mismatch("is not an object")
			return false
		}
		return d.object(v, p, false)
	default:
		d.mismatch(fmt.Sprintf("has unsupported type %s", p.typ))
		return false
	}
	return true
}

// drop drops the problems recorded since from and before to: those of a
// value that no longer counts.
func (d *decoder) drop(from, to int) {
	for i := from; i < to; i++ {
		d.errs[i], d.problems.bad[i] = nil, ""
	}
}

// number is the text of the integer read last.
func (d *decoder) number() string { return string(d.lastNumber) }

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

// mapValue reads an object into the map v.
func (d *decoder) mapValue(v reflect.Value, p *plan) bool {
	if p.typ == stringMapType {
		m := map[string]string{}
		ok := d.stringMap(m)
		v.Set(reflect.ValueOf(m))
		return ok
	}
	m := reflect.MakeMap(p.typ)
	// The problems of each name's value, for when the name comes again.
	type read struct {
		name     string
		from, to int
	}
	var buf [8]read
	reads := buf[:0]
	ok := d.s.Object(func(nb []byte) bool {
		name := string(nb)
		i := slices.IndexFunc(reads, func(r read) bool { return r.name == name })
		if i >= 0 { // the same name again: the later value counts
			d.drop(reads[i].from, reads[i].to)
		} else {
			i = len(reads)
			reads = append(reads, read{name: name})
		}
		key := reflect.ValueOf(name).Convert(p.typ.Key())
		m.SetMapIndex(key, reflect.Value{})
		d.path = append(d.path, segment{name, -1})
		reads[i].from = len(d.errs)
		e := reflect.New(p.typ.Elem()).Elem()
		if d.value(e, p.elem) {
			m.SetMapIndex(key, e)
		}
		reads[i].to = len(d.errs)
		d.path = d.path[:len(d.path)-1]
		return d.s.Err() == nil
	})
	v.Set(m)
	return ok
}

// stringMap reads an object into m: headers and message properties,
// without reflection for each member.
func (d *decoder) stringMap(m map[string]string) bool {
	// The problems of each name's value, for when the name comes again.
	type read struct {
		name     string
		from, to int
	}
	var buf [8]read
	reads := buf[:0]
	return d.s.Object(func(nb []byte) bool {
		if i := slices.IndexFunc(reads, func(r read) bool { return r.name == string(nb) }); i >= 0 {
			d.drop(reads[i].from, reads[i].to) // the same name again: the later value counts
			reads = slices.Delete(reads, i, i+1)
		}
		name := string(nb)
		from := len(d.errs)
		delete(m, name)
		switch d.s.Kind() {
		case jsonc.Null:
			d.s.Null() // left out
		case jsonc.String:
			if s, ok := d.s.String(); ok {
				m[name] = s
			}
		default:
			d.path = append(d.path, segment{name, -1})
			d.mismatch("is not a string")
			d.path = d.path[:len(d.path)-1]
		}
		if len(d.errs) > from {
			reads = append(reads, read{name, from, len(d.errs)})
		}
		return d.s.Err() == nil
	})
}

// matched is what object knows of the member that counts for a field.
type matched struct {
	name     []byte    // as given
	from, to int32     // the problems of its value
	others   *[][]byte // the other spellings given, duplicates
}

// rootMember is a member of the top-level object of an envelope: its name
// and where its value starts.
type rootMember struct {
	name string
	at   int
}

// object reads an object into the struct v. At the top level (top), a
// member "properties" marks an envelope.
func (d *decoder) object(v reflect.Value, p *plan, top bool) bool {
	var buf [16]matched // enough for every type of a definition
	fields := buf[:]
	if len(p.fields) > len(buf) {
		fields = make([]matched, len(p.fields))
	}
	var unknown []string
	first := true
	ok := d.s.Object(func(name []byte) bool {
		if top && (first && strings.EqualFold(string(name), "properties") || d.root != nil) {
			// An envelope: its members are checked by envelope. The
			// properties object that comes first is read now: it is the
			// one that counts, unless another spelling of it follows.
			d.envelope = true
			d.root = append(d.root, rootMember{string(name), d.s.Offset()})
			if !first || d.s.Kind() != jsonc.Object {
				return d.s.Skip()
			}
			first = false
			d.props, d.propsAt, d.propsFrom = new(Job), d.s.Offset(), len(d.errs)
			d.path = append(d.path, segment{"properties", -1})
			ok := d.object(reflect.ValueOf(d.props).Elem(), p, false)
			d.path = d.path[:len(d.path)-1]
			d.propsTo = len(d.errs)
			return ok
		}
		first = false
		if top && d.envelope {
			return d.s.Skip() // it is read again as an envelope
		}
		f, ok := p.exact[string(name)]
		if !ok {
			lower := strings.ToLower(string(name))
			if top && lower == "properties" {
				d.envelope = true
			}
			if p.ignored[lower] {
				return d.s.Skip()
			}
			as := string(name)
			if a, ok := p.aliases[lower]; ok {
				as = a
			}
			f = slices.IndexFunc(p.fields, func(f field) bool { return strings.EqualFold(f.name, as) })
		}
		if f < 0 {
			if n := string(name); !slices.Contains(unknown, n) {
				unknown = append(unknown, n)
				d.addName(jsonpath.Key(d.pathString(), n), "unknown field")
			}
			return d.s.Skip()
		}
		m := &fields[f]
		fv := v.FieldByIndex(p.fields[f].index)
		if m.name != nil {
			if m.others == nil {
				m.others = new([][]byte)
			}
			switch c := bytes.Compare(name, m.name); {
			case c == 0: // the same name again: the later value counts
			case c < 0: // first in order: it counts, the other is a duplicate
				*m.others = append(*m.others, m.name)
				m.name = name
			default:
				if !slices.ContainsFunc(*m.others, func(o []byte) bool { return bytes.Equal(o, name) }) {
					*m.others = append(*m.others, name)
				}
				return d.s.Skip()
			}
			d.drop(int(m.from), int(m.to))
			fv.SetZero()
		}
		m.name = name
		m.from = int32(len(d.errs))
		d.field(fv, &p.fields[f])
		m.to = int32(len(d.errs))
		return d.s.Err() == nil
	})
	for f := range p.fields {
		m := &fields[f]
		if m.others == nil {
			continue
		}
		others := *m.others
		slices.SortFunc(others, bytes.Compare)
		for _, o := range others {
			d.addName(jsonpath.Key(d.pathString(), string(o)), fmt.Sprintf("is a duplicate of %q", m.name))
		}
	}
	return ok
}

// field reads the value of member f into fv.
func (d *decoder) field(fv reflect.Value, f *field) {
	d.path = append(d.path, segment{f.name, -1})
	before := len(d.errs)
	if f.positive && f.plan.kind == intKind && f.plan.ptrs == 0 {
		// Zero means absent in Go: a zero given is refused.
		if d.value(fv, f.plan) && fv.Int() == 0 {
			fv.SetZero()
			d.add(d.pathString(), jsonpath.Text(json.Number(d.number())), "must be at least 1")
		}
	} else {
		d.value(fv, f.plan)
	}
	if f.secret {
		for _, e := range d.errs[before:] {
			if e != nil {
				e.Value = ""
			}
		}
	}
	d.path = d.path[:len(d.path)-1]
}
