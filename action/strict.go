package action

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/jobclock/scheduler/internal/jsonpath"
	"github.com/jobclock/scheduler/internal/suggest"
)

// checkJSON reports every way in which data does not decode into a value
// of type t as encoding/json decodes it, with paths under path: members t
// lacks, members given twice, values of the wrong JSON type or out of
// range. Types with their own UnmarshalJSON or UnmarshalText are decoded
// by them and report their error at their path.
func checkJSON(path string, data []byte, t reflect.Type) []*FieldError {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return []*FieldError{{Path: path, Reason: "is not JSON: " + err.Error()}}
	}
	if dec.More() {
		return []*FieldError{{Path: path, Reason: "is not JSON: more than one value"}}
	}
	c := &strictChecker{}
	c.check(path, v, t)
	return c.errs
}

type strictChecker struct{ errs []*FieldError }

func (c *strictChecker) add(path string, v any, reason string) {
	c.errs = append(c.errs, &FieldError{Path: path, Value: jsonText(v), Reason: reason})
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	numberType          = reflect.TypeFor[json.Number]()
	rawType             = reflect.TypeFor[json.RawMessage]()
)

// check reports the problems of v (decoded with UseNumber) as a t.
func (c *strictChecker) check(path string, v any, t reflect.Type) {
	if v == nil {
		return // null leaves any Go value as it is, or sets it to nil
	}
	for t.Kind() == reflect.Pointer {
		if t.Implements(unmarshalerType) || t.Implements(textUnmarshalerType) {
			break
		}
		t = t.Elem()
	}
	if t == numberType || t == rawType || t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) ||
		t.Implements(textUnmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType) {
		c.delegate(path, v, t)
		return
	}
	switch t.Kind() {
	case reflect.Interface:
		if t.NumMethod() > 0 {
			c.add(path, v, fmt.Sprintf("cannot be decoded into the interface %s", t))
		}
	case reflect.String:
		if _, ok := v.(string); !ok {
			c.add(path, v, "is not a string")
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			c.add(path, v, "is not a boolean (true or false)")
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := v.(json.Number)
		if !ok {
			c.add(path, v, "is not an integer")
		} else if _, err := strconv.ParseInt(string(n), 10, t.Bits()); err != nil {
			c.numberError(path, v, err, "is not an integer")
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		n, ok := v.(json.Number)
		if !ok {
			c.add(path, v, "is not an integer")
		} else if _, err := strconv.ParseUint(string(n), 10, t.Bits()); err != nil {
			if strings.HasPrefix(string(n), "-") {
				c.add(path, v, "is negative")
			} else {
				c.numberError(path, v, err, "is not an integer")
			}
		}
	case reflect.Float32, reflect.Float64:
		n, ok := v.(json.Number)
		if !ok {
			c.add(path, v, "is not a number")
		} else if f, err := strconv.ParseFloat(string(n), t.Bits()); err != nil || math.IsInf(f, 0) {
			c.add(path, v, "is out of range")
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 && !reflect.PointerTo(t.Elem()).Implements(unmarshalerType) {
			// []byte is base64 text.
			c.delegate(path, v, t)
			return
		}
		arr, ok := v.([]any)
		if !ok {
			c.add(path, v, "is not an array")
			return
		}
		for i, x := range arr {
			c.check(fmt.Sprintf("%s[%d]", path, i), x, t.Elem())
		}
	case reflect.Array:
		arr, ok := v.([]any)
		if !ok {
			c.add(path, v, "is not an array")
			return
		}
		if len(arr) > t.Len() {
			c.add(path, nil, fmt.Sprintf("has %d elements, more than the %d it can hold", len(arr), t.Len()))
		}
		for i, x := range arr[:min(len(arr), t.Len())] {
			c.check(fmt.Sprintf("%s[%d]", path, i), x, t.Elem())
		}
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			c.add(path, v, "is not an object")
			return
		}
		kt := t.Key()
		for _, k := range sortedKeys(obj) {
			kp := pathKey(path, k)
			switch {
			case reflect.PointerTo(kt).Implements(textUnmarshalerType):
				if err := reflect.New(kt).Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(k)); err != nil {
					c.add(kp, nil, "is not a valid key: "+err.Error())
					continue
				}
			case kt.Kind() == reflect.String:
			case kt.Kind() >= reflect.Int && kt.Kind() <= reflect.Int64:
				if _, err := strconv.ParseInt(k, 10, kt.Bits()); err != nil {
					c.add(kp, nil, "is not an integer key")
					continue
				}
			case kt.Kind() >= reflect.Uint && kt.Kind() <= reflect.Uintptr:
				if _, err := strconv.ParseUint(k, 10, kt.Bits()); err != nil {
					c.add(kp, nil, "is not an unsigned integer key")
					continue
				}
			default:
				c.add(path, nil, fmt.Sprintf("cannot be decoded into a map with %s keys", kt))
				return
			}
			c.check(kp, obj[k], t.Elem())
		}
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			c.add(path, v, "is not an object")
			return
		}
		c.checkStruct(path, obj, t)
	default:
		c.add(path, v, fmt.Sprintf("cannot be decoded into a %s", t))
	}
}

func (c *strictChecker) numberError(path string, v any, err error, reason string) {
	if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
		c.add(path, v, "is out of range")
		return
	}
	c.add(path, v, reason)
}

// delegate decodes v into a new t with encoding/json, for types that
// decode themselves.
func (c *strictChecker) delegate(path string, v any, t reflect.Type) {
	data, err := json.Marshal(v)
	if err != nil {
		c.add(path, nil, err.Error())
		return
	}
	if err := json.Unmarshal(data, reflect.New(t).Interface()); err != nil {
		reason := err.Error()
		if te, ok := err.(*json.UnmarshalTypeError); ok {
			reason = fmt.Sprintf("is not a valid %s (a JSON %s)", t, te.Value)
		}
		c.add(path, v, strings.TrimPrefix(reason, "json: "))
	}
}

func (c *strictChecker) checkStruct(path string, obj map[string]any, t reflect.Type) {
	fields := structFields(t)
	matched := make([]string, len(fields))
	for _, k := range sortedKeys(obj) {
		i := -1
		for j, f := range fields {
			if f.name == k {
				i = j
				break
			}
		}
		if i < 0 {
			for j, f := range fields {
				if strings.EqualFold(f.name, k) {
					i = j
					break
				}
			}
		}
		switch {
		case i < 0:
			names := make([]string, len(fields))
			for j, f := range fields {
				names[j] = f.name
			}
			c.errs = append(c.errs, &FieldError{Path: pathKey(path, k), Reason: "unknown field" + suggest.DidYouMean(k, names)})
		case matched[i] != "":
			c.errs = append(c.errs, &FieldError{Path: pathKey(path, k), Reason: fmt.Sprintf("is a duplicate of %q", matched[i])})
		default:
			matched[i] = k
			f := fields[i]
			fp := pathKey(path, k)
			if f.quoted {
				c.checkQuoted(fp, obj[k], f.typ)
				continue
			}
			c.check(fp, obj[k], f.typ)
		}
	}
}

// checkQuoted checks a field with the ",string" option: a string, or
// null, holding the JSON of a number, boolean or string.
func (c *strictChecker) checkQuoted(path string, v any, t reflect.Type) {
	if v == nil {
		return
	}
	s, ok := v.(string)
	if !ok {
		c.add(path, v, "is not a string (the field is encoded as a quoted value)")
		return
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var inner any
	if t.Kind() == reflect.String {
		if err := json.Unmarshal([]byte(s), new(string)); err != nil {
			c.add(path, v, "is not a quoted JSON string")
		}
		return
	}
	if err := dec.Decode(&inner); err != nil {
		c.add(path, v, "does not quote a JSON value")
		return
	}
	c.check(path, inner, t)
}

// structField is a member of a struct as encoding/json sees it.
type structField struct {
	name   string
	typ    reflect.Type
	quoted bool // the ",string" option on a number, boolean or string
}

var structFieldCache sync.Map // reflect.Type -> []structField

// structFields lists the JSON members of struct type t: its exported
// fields and those promoted from embedded structs, named by their json
// tags, following encoding/json's rules for names that conflict (the
// shallowest wins, then the tagged one; otherwise neither is a member).
func structFields(t reflect.Type) []structField {
	if v, ok := structFieldCache.Load(t); ok {
		return v.([]structField)
	}
	type cand struct {
		structField
		depth  int
		tagged bool
	}
	var cands []cand
	type level struct {
		t     reflect.Type
		depth int
	}
	queue := []level{{t, 0}}
	seen := map[reflect.Type]bool{}
	for len(queue) > 0 {
		l := queue[0]
		queue = queue[1:]
		if seen[l.t] {
			continue
		}
		seen[l.t] = true
		for i := range l.t.NumField() {
			f := l.t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			ft := f.Type
			if f.Anonymous {
				et := ft
				if et.Kind() == reflect.Pointer {
					et = et.Elem()
				}
				if name == "" && et.Kind() == reflect.Struct {
					if f.IsExported() || ft.Kind() != reflect.Pointer {
						queue = append(queue, level{et, l.depth + 1})
					}
					continue
				}
				if !f.IsExported() {
					continue
				}
			} else if !f.IsExported() {
				continue
			}
			quoted := false
			if strings.Contains(","+opts+",", ",string,") {
				bt := ft
				if bt.Kind() == reflect.Pointer {
					bt = bt.Elem()
				}
				switch bt.Kind() {
				case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
					reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
					reflect.Float32, reflect.Float64, reflect.String:
					quoted = true
				}
			}
			tagged := name != ""
			if name == "" {
				name = f.Name
			}
			cands = append(cands, cand{structField{name, ft, quoted}, l.depth, tagged})
		}
	}
	byName := map[string][]cand{}
	var order []string
	for _, c := range cands {
		if _, ok := byName[c.name]; !ok {
			order = append(order, c.name)
		}
		byName[c.name] = append(byName[c.name], c)
	}
	var out []structField
	for _, name := range order {
		cs := byName[name]
		sort.SliceStable(cs, func(i, j int) bool {
			if cs[i].depth != cs[j].depth {
				return cs[i].depth < cs[j].depth
			}
			return cs[i].tagged && !cs[j].tagged
		})
		if len(cs) > 1 && cs[0].depth == cs[1].depth && cs[0].tagged == cs[1].tagged {
			continue // ambiguous: encoding/json ignores both
		}
		out = append(out, cs[0].structField)
	}
	structFieldCache.Store(t, out)
	return out
}

// pathKey appends member k to a path under "custom", which is never
// empty.
func pathKey(path, k string) string { return jsonpath.Key(path, k) }

var sortedKeys = jsonpath.SortedKeys

// jsonText renders v as abbreviated JSON text; empty for nil.
func jsonText(v any) string {
	if v == nil {
		return ""
	}
	return jsonpath.Text(v)
}
