// Package fill sets and changes every reachable member of a Go value, for
// tests that a copy shares nothing with its original: fill a value, copy
// it, change every member of the copy, and compare the original with a
// second value filled the same way.
package fill

import (
	"encoding/json"
	"reflect"
	"strconv"
	"time"
)

var (
	timeType = reflect.TypeFor[time.Time]()
	rawType  = reflect.TypeFor[json.RawMessage]()
)

// Fill sets every exported member reachable from the pointer v to a value
// that is not its zero value: pointers point to new filled values, slices
// and maps get two filled elements, strings, numbers and times depend on
// seed and on the member's place, so that two calls with the same seed
// fill equal values. Interface members are left alone. json.RawMessage
// members get a small JSON object.
//
// A type that refers to itself (an action's error action, an error's
// details) is filled two levels deep: the value of that type inside the
// value inside the filled one stays empty.
func Fill(v any, seed int) {
	f := filler{n: seed * 1000, open: map[reflect.Type]int{}}
	f.fill(reflect.ValueOf(v).Elem())
}

type filler struct {
	n    int
	open map[reflect.Type]int // struct types being filled, to stop recursion
}

func (f *filler) fill(v reflect.Value) {
	f.n++
	n := &f.n
	switch {
	case v.Type() == timeType:
		v.Set(reflect.ValueOf(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(*n) * time.Second)))
		return
	case v.Type() == rawType:
		v.SetBytes([]byte(`{"k":` + strconv.Itoa(*n) + `}`))
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if f.open[v.Type().Elem()] > 1 {
			return
		}
		p := reflect.New(v.Type().Elem())
		f.fill(p.Elem())
		v.Set(p)
	case reflect.Struct:
		if f.open[v.Type()] > 2 {
			return
		}
		f.open[v.Type()]++
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				f.fill(v.Field(i))
			}
		}
		f.open[v.Type()]--
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			f.fill(s.Index(i))
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for range 2 {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			f.fill(k)
			f.fill(e)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.String:
		v.SetString("s" + strconv.Itoa(*n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(*n%99) + 1) // never zero: a member set is never left out
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(*n%99) + 1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(*n))
	}
}

// Mutate changes, in place, every exported member reachable from the
// pointer v: it follows pointers, slices and maps and changes what they
// refer to rather than replacing them, so that a member shared with
// another value shows the change there too. Interface members are left
// alone.
func Mutate(v any) { mutate(reflect.ValueOf(v).Elem()) }

func mutate(v reflect.Value) {
	switch {
	case v.Type() == timeType:
		v.Set(reflect.ValueOf(v.Interface().(time.Time).Add(time.Hour)))
		return
	case v.Type() == rawType:
		for i := range v.Len() {
			if b := v.Index(i); b.Uint() == 'k' {
				b.SetUint('m')
			}
		}
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			mutate(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				mutate(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			mutate(v.Index(i))
		}
	case reflect.Map:
		if v.IsNil() {
			return // shares nothing, and cannot be changed in place
		}
		for _, k := range v.MapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			mutate(e)
			v.SetMapIndex(k, e)
		}
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		f := filler{n: 999_000, open: map[reflect.Type]int{}}
		f.fill(k)
		f.fill(e)
		v.SetMapIndex(k, e)
	case reflect.String:
		v.SetString(v.String() + "~")
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(v.Int() + 1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(v.Uint() + 1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(v.Float() + 1)
	}
}
