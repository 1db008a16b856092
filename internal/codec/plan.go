// Package codec reads and writes the JSON of jobclock's values (job
// definitions, the REST API's resources, the records the SQL stores keep)
// by their Go types' own description: their exported fields and json tags,
// as encoding/json reads and writes them. It is the module's one JSON
// mechanism: package jsonc reads the text, and each Go type gets a plan,
// made once, that says how its values are read, written and brought to
// the form their JSON holds.
//
// The reader reports every problem at its JSON path and reads on (see
// Decoder); the writer writes exactly the bytes encoding/json writes for
// the same values (see Append). Values of kinds outside those the types
// hold (floats, interfaces, channels, ...) are refused, not guessed at.
package codec

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jobclock/scheduler/retry"
)

var (
	timeType        = reflect.TypeFor[time.Time]()
	durationType    = reflect.TypeFor[retry.Duration]()
	rawType         = reflect.TypeFor[json.RawMessage]()
	stringMapType   = reflect.TypeFor[map[string]string]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	anyType         = reflect.TypeFor[any]()
	anyMapType      = reflect.TypeFor[map[string]any]()
	anySliceType    = reflect.TypeFor[[]any]()
)

// Rules are what a family of types adds to their json tags when read:
// other names members are known by, members read and dropped, members
// whose values problems never show, and integers that must be at least 1
// when given (their zero value meaning absent). The zero Rules add
// nothing. A Rules value must not change once used: its plans are kept in
// it.
type Rules struct {
	// Aliases maps, for a struct type, another spelling of a member (in
	// lower case) to the member's JSON name.
	Aliases map[reflect.Type]map[string]string
	// Ignored holds, for a struct type, the members (in lower case) read
	// and dropped, whatever their value.
	Ignored map[reflect.Type]map[string]bool
	// Secret holds the JSON names of members whose values problems never
	// show.
	Secret map[string]bool
	// Positive holds, for a struct type, the integer members that must be
	// at least 1 when given.
	Positive map[reflect.Type]map[string]bool
	// SkipUnknown skips members a struct does not have, as encoding/json
	// does, instead of reporting them.
	SkipUnknown bool
	// RawAsGiven keeps the text of a json.RawMessage as given, as
	// encoding/json does, instead of writing it as encoding/json writes
	// the value it holds (compact, members in order).
	RawAsGiven bool

	mu    sync.Mutex
	plans map[reflect.Type]*plan
}

// none is the Rules of values read without rules of their own.
var none = new(Rules)

// stored is the Rules of values read back from where the program stored
// them: see Unmarshal.
var stored = &Rules{SkipUnknown: true, RawAsGiven: true}

// kind is how values of a Go type are read and written.
type kind uint8

const (
	unsupported  kind = iota
	timeKind          // time.Time: an ISO 8601 string
	durationKind      // retry.Duration: an ISO 8601 string
	rawKind           // json.RawMessage: any JSON, kept in compact form
	stringKind
	enumKind // a string type with its own UnmarshalJSON
	intKind
	boolKind
	sliceKind
	mapKind // with string keys
	structKind
	// anyKind is an any, read as encoding/json reads it with UseNumber;
	// only read, for the value a json.RawMessage holds.
	anyKind
)

// plan is how values of one Go type are read and written, made once per
// type and Rules.
type plan struct {
	kind kind
	typ  reflect.Type // the type behind ptrs pointers
	ptrs int
	elem *plan // slices and maps
	// structKind:
	fields  []field
	exact   map[string]int    // JSON name -> field, except ignored names
	aliases map[string]string // see Rules.Aliases
	ignored map[string]bool   // see Rules.Ignored
	hidden  [][]int           // the exported fields JSON leaves out (json:"-")
	// embedded are the embedded pointers to structs whose members are
	// all left out when empty: a value that points to a zero struct
	// writes nothing, so its JSON decodes to nil.
	embedded [][]int
}

// field is a member of a struct.
type field struct {
	name             string    // as encoding/json names it
	key              [2]string // name as a JSON string and a colon, escaped for HTML ([1]) or not
	index            []int     // for reflect.Value.FieldByIndex
	plan             *plan
	omitEmpty        bool // the tag's omitempty
	omitZero         bool // the tag's omitzero
	secret, positive bool
}

// planOf returns the plan of t under r (nil: none).
func planOf(t reflect.Type, r *Rules) *plan {
	if r == nil {
		r = none
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.plans == nil {
		r.plans = map[reflect.Type]*plan{}
	}
	return r.planLocked(t)
}

func (r *Rules) planLocked(t reflect.Type) *plan {
	if p, ok := r.plans[t]; ok {
		return p
	}
	p := &plan{}
	r.plans[t] = p // before the members: a type may refer to itself
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
	case t == anyType:
		p.kind = anyKind
	case t.Kind() == reflect.String && reflect.PointerTo(t).Implements(unmarshalerType):
		p.kind = enumKind
	case t.Kind() == reflect.String:
		p.kind = stringKind
	case t.Kind() == reflect.Int, t.Kind() == reflect.Int64, t.Kind() == reflect.Int32:
		p.kind = intKind
	case t.Kind() == reflect.Bool:
		p.kind = boolKind
	case t.Kind() == reflect.Slice:
		p.kind, p.elem = sliceKind, r.planLocked(t.Elem())
	case t.Kind() == reflect.Map && t.Key().Kind() == reflect.String:
		p.kind, p.elem = mapKind, r.planLocked(t.Elem())
	case t.Kind() == reflect.Struct:
		p.kind = structKind
		p.ignored, p.aliases = r.Ignored[t], r.Aliases[t]
		p.exact = map[string]int{}
		p.hidden = hiddenFields(t)
		p.embedded = omittedEmbeds(t)
		for _, f := range jsonFields(t) {
			if !p.ignored[strings.ToLower(f.name)] {
				p.exact[f.name] = len(p.fields)
			}
			f.plan = r.planLocked(f.typ)
			f.secret, f.positive = r.Secret[f.name], r.Positive[t][f.name]
			f.key[0] = string(appendString(nil, f.name, false)) + ":"
			f.key[1] = string(appendString(nil, f.name, true)) + ":"
			p.fields = append(p.fields, f.field)
		}
	}
	return p
}

// jsonField is a member of a struct as encoding/json sees it.
type jsonField struct {
	field
	typ reflect.Type
}

// embeddedStruct returns the struct type that field f embeds, as
// encoding/json reads it: a struct, or a pointer to an exported struct
// type. ok is false for any other field.
func embeddedStruct(f reflect.StructField) (t reflect.Type, ok bool) {
	if !f.Anonymous {
		return nil, false
	}
	t = f.Type
	if t.Kind() == reflect.Pointer {
		if !f.IsExported() {
			return nil, false
		}
		t = t.Elem()
	}
	return t, t.Kind() == reflect.Struct
}

// omittedEmbeds lists the embedded pointers to structs of struct type t
// (and of the structs it embeds) whose members are all omitempty or
// omitzero.
func omittedEmbeds(t reflect.Type) [][]int {
	var out [][]int
	for i := range t.NumField() {
		f := t.Field(i)
		et, ok := embeddedStruct(f)
		if !ok {
			continue
		}
		for _, h := range omittedEmbeds(et) {
			out = append(out, append([]int{i}, h...))
		}
		if f.Type.Kind() == reflect.Pointer && !slices.ContainsFunc(jsonFields(et), func(e jsonField) bool {
			return !e.omitEmpty && !e.omitZero
		}) {
			out = append(out, f.Index)
		}
	}
	return out
}

// hiddenFields lists the exported fields of struct type t, and of the
// structs it embeds, that JSON leaves out.
func hiddenFields(t reflect.Type) [][]int {
	var out [][]int
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		et, embedded := embeddedStruct(f)
		switch {
		case embedded:
			for _, h := range hiddenFields(et) {
				out = append(out, append([]int{i}, h...))
			}
		case f.IsExported() && name == "-" && opts == "":
			out = append(out, f.Index)
		}
	}
	return out
}

// jsonFields lists the JSON members of struct type t in declaration
// order, those of embedded structs (and of the structs embedded pointers
// lead to, as encoding/json reads them) in their place.
func jsonFields(t reflect.Type) []jsonField {
	var out []jsonField
	for i := range t.NumField() {
		f := t.Field(i)
		if et, ok := embeddedStruct(f); ok {
			for _, e := range jsonFields(et) {
				e.index = append([]int{i}, e.index...)
				out = append(out, e)
			}
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" && opts == "" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		options := strings.Split(opts, ",")
		out = append(out, jsonField{field: field{name: name, index: f.Index,
			omitEmpty: slices.Contains(options, "omitempty"), omitZero: slices.Contains(options, "omitzero")}, typ: f.Type})
	}
	return out
}
