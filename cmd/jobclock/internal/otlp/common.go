package otlp

import (
	"encoding/json"
	"math"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
)

// The types below are the messages of the OTLP protobuf definitions
// (opentelemetry/proto/common/v1, resource/v1, trace/v1, metrics/v1) as
// their JSON mapping writes them: members in lowerCamelCase, 64-bit
// integers as decimal strings, enums as integers, trace and span ids as
// hex strings, zero values left out.

type resourceJSON struct {
	Attributes             []keyValue `json:"attributes,omitempty"`
	DroppedAttributesCount uint32     `json:"droppedAttributesCount,omitempty"`
}

type scopeJSON struct {
	Name       string     `json:"name,omitempty"`
	Version    string     `json:"version,omitempty"`
	Attributes []keyValue `json:"attributes,omitempty"`
}

type keyValue struct {
	Key   string   `json:"key"`
	Value anyValue `json:"value"`
}

// anyValue holds one of its members; none for an empty value.
type anyValue struct {
	StringValue *string      `json:"stringValue,omitempty"`
	BoolValue   *bool        `json:"boolValue,omitempty"`
	IntValue    string       `json:"intValue,omitempty"` // int64
	DoubleValue *double      `json:"doubleValue,omitempty"`
	ArrayValue  *arrayValue  `json:"arrayValue,omitempty"`
	KvlistValue *kvlistValue `json:"kvlistValue,omitempty"`
	BytesValue  []byte       `json:"bytesValue,omitempty"` // base64
}

type arrayValue struct {
	Values []anyValue `json:"values"`
}

type kvlistValue struct {
	Values []keyValue `json:"values"`
}

// double is a float64 that writes NaN and the infinities as the JSON
// mapping does ("NaN", "Infinity", "-Infinity").
type double float64

func (d double) MarshalJSON() ([]byte, error) {
	f := float64(d)
	switch {
	case math.IsNaN(f):
		return []byte(`"NaN"`), nil
	case math.IsInf(f, 1):
		return []byte(`"Infinity"`), nil
	case math.IsInf(f, -1):
		return []byte(`"-Infinity"`), nil
	}
	return json.Marshal(f)
}

func doublePtr(f float64) *double {
	d := double(f)
	return &d
}

// u64 writes a uint64 as the JSON mapping does: a decimal string.
func u64(v uint64) string { return strconv.FormatUint(v, 10) }

// nanos returns t in nanoseconds since 1970 as a decimal string; "" (left
// out) for the zero time.
func nanos(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return u64(uint64(max(0, t.UnixNano())))
}

func keyValues(kvs []attribute.KeyValue) []keyValue {
	if len(kvs) == 0 {
		return nil
	}
	out := make([]keyValue, 0, len(kvs))
	for _, kv := range kvs {
		out = append(out, keyValue{Key: string(kv.Key), Value: value(kv.Value)})
	}
	return out
}

func setKeyValues(s *attribute.Set) []keyValue {
	if s == nil {
		return nil
	}
	return keyValues(s.ToSlice())
}

func value(v attribute.Value) anyValue {
	switch v.Type() {
	case attribute.BOOL:
		b := v.AsBool()
		return anyValue{BoolValue: &b}
	case attribute.INT64:
		return anyValue{IntValue: strconv.FormatInt(v.AsInt64(), 10)}
	case attribute.FLOAT64:
		return anyValue{DoubleValue: doublePtr(v.AsFloat64())}
	case attribute.STRING:
		s := v.AsString()
		return anyValue{StringValue: &s}
	case attribute.BYTESLICE:
		return anyValue{BytesValue: v.AsByteSlice()}
	case attribute.BOOLSLICE:
		return array(v.AsBoolSlice(), attribute.BoolValue)
	case attribute.INT64SLICE:
		return array(v.AsInt64Slice(), attribute.Int64Value)
	case attribute.FLOAT64SLICE:
		return array(v.AsFloat64Slice(), attribute.Float64Value)
	case attribute.STRINGSLICE:
		return array(v.AsStringSlice(), attribute.StringValue)
	case attribute.SLICE:
		return array(v.AsSlice(), func(e attribute.Value) attribute.Value { return e })
	case attribute.MAP:
		return anyValue{KvlistValue: &kvlistValue{Values: keyValues(v.AsMap())}}
	}
	return anyValue{}
}

// array returns the elements of a slice as an arrayValue.
func array[T any](elems []T, to func(T) attribute.Value) anyValue {
	vs := make([]anyValue, 0, len(elems))
	for _, e := range elems {
		vs = append(vs, value(to(e)))
	}
	return anyValue{ArrayValue: &arrayValue{Values: vs}}
}

func resourceOf(r *resource.Resource) resourceJSON {
	if r == nil {
		return resourceJSON{}
	}
	return resourceJSON{Attributes: setKeyValues(r.Set())}
}

func scopeOf(s instrumentation.Scope) scopeJSON {
	return scopeJSON{Name: s.Name, Version: s.Version, Attributes: setKeyValues(&s.Attributes)}
}

// clamp32 clamps a count to the uint32 of the protobuf definitions.
func clamp32(n int) uint32 {
	return uint32(min(max(int64(n), 0), math.MaxUint32))
}
