package codec_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/httpapi"
	"github.com/jobclock/scheduler/internal/codec"
	"github.com/jobclock/scheduler/internal/fill"
)

// encodingJSON is what encoding/json writes for v: json.Marshal when
// html, else an Encoder with SetEscapeHTML(false), without its newline.
func encodingJSON(v any, html bool) ([]byte, error) {
	if html {
		return json.Marshal(v)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// sameAsEncodingJSON checks Append against encoding/json for v, in both
// modes.
func sameAsEncodingJSON(t *testing.T, v any) {
	t.Helper()
	for _, html := range []bool{true, false} {
		want, wantErr := encodingJSON(v, html)
		got, err := codec.Append(nil, v, html)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("Append(%T, html %v) error %v, encoding/json %v", v, html, err, wantErr)
		}
		if string(got) != string(want) {
			t.Fatalf("Append(%T, html %v) =\n%s\nencoding/json writes\n%s", v, html, got, want)
		}
	}
}

// values are the types the codec writes, filled.
func values(seed int) []any {
	out := []any{
		new(scheduler.Job), new(scheduler.JobStatus), new(scheduler.JobSchedule), new(scheduler.HistoryEntry),
		new(scheduler.JobCollection), new(httpapi.JobDefinition), new(httpapi.JobListResult),
		new(httpapi.JobCollectionDefinition), new(httpapi.JobCollectionListResult), new(httpapi.JobHistoryListResult),
		new(httpapi.ErrorResponse),
	}
	for _, v := range out {
		fill.Fill(v, seed)
	}
	return out
}

// TestAppendAsEncodingJSON writes every member of every type the codec
// writes, set (Fill) and left empty, and compares with encoding/json.
func TestAppendAsEncodingJSON(t *testing.T) {
	for _, v := range values(1) {
		sameAsEncodingJSON(t, v)
		sameAsEncodingJSON(t, reflect.ValueOf(v).Elem().Interface()) // by value, too
		zero := reflect.New(reflect.TypeOf(v).Elem()).Interface()
		sameAsEncodingJSON(t, zero)
	}
	sameAsEncodingJSON(t, (*scheduler.Job)(nil))
}

// TestAppendStrings puts every byte value, and runes encoding/json
// escapes, at every position of short strings.
func TestAppendStrings(t *testing.T) {
	special := []string{"\u2028", "\u2029", "\ufffd", "é", "<", ">", "&", "\\", "\"", "\x7f", "\xe2\x80", "\xff"}
	for c := range 256 {
		for _, s := range []string{string(rune(c)), "ab" + string([]byte{byte(c)}) + "cd", string([]byte{byte(c)}) + "\u2028"} {
			sameAsEncodingJSON(t, &httpapi.ErrorDetail{Code: s, Message: s + "x"})
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var b []byte
		for range r.IntN(12) {
			if r.IntN(3) == 0 {
				b = append(b, special[r.IntN(len(special))]...)
			} else {
				b = append(b, byte(r.IntN(256)))
			}
		}
		sameAsEncodingJSON(t, &httpapi.ErrorDetail{Code: string(b)})
	}
}

// TestAppendEdges: the values encoding/json refuses, raw JSON to compact
// or escape, times in zones, maps and slices empty and nil.
func TestAppendEdges(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []time.Time{
		time.Date(2026, 7, 1, 10, 0, 0, 123456789, berlin), time.Date(2026, 7, 1, 10, 0, 0, 0, time.FixedZone("", -9000)),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("", 25*3600)), time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("", 3600+30)),
		{},
	} {
		sameAsEncodingJSON(t, &scheduler.JobSchedule{DueAt: at, Current: &scheduler.Occurrence{Expected: at}})
	}
	for _, raw := range []string{`{}`, ` {"b" : [1, "<&>"],` + "\n" + ` "a": null} `, "\"\u2028\"", `{"a":`, ``, `null`} {
		j := &scheduler.Job{}
		j.Action.Custom = json.RawMessage(raw)
		sameAsEncodingJSON(t, j)
	}
	sameAsEncodingJSON(t, &scheduler.JobCollection{Tags: map[string]string{}})
	sameAsEncodingJSON(t, &httpapi.JobListResult{Value: []httpapi.JobDefinition{}})
	sameAsEncodingJSON(t, &httpapi.JobListResult{})
}

// TestUnmarshalRoundTrip reads back what encoding/json writes for every
// type, every member set: the same value, in the form JSON keeps.
func TestUnmarshalRoundTrip(t *testing.T) {
	for i, v := range values(2) {
		want := values(2)[i]
		codec.Normalize(want)
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got := reflect.New(reflect.TypeOf(v).Elem()).Interface()
		if err := codec.Unmarshal(data, got); err != nil {
			t.Fatalf("Unmarshal(%s) = %v", data, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%T read back (-want +got):\n%s", v, diff)
		}
	}
}

// Extra and withExtra stand for a struct that keeps rare members behind
// an embedded pointer.
type Extra struct {
	B string `json:"b,omitempty"`
	C int    `json:"c,omitempty"`
}

type withExtra struct {
	A string `json:"a"`
	*Extra
	D string `json:"d,omitempty"`
}

// TestEmbeddedPointer: the members of an embedded pointer to a struct are
// read and written as encoding/json reads and writes them, in place, and
// a pointer to an empty struct normalizes to nil.
func TestEmbeddedPointer(t *testing.T) {
	for _, v := range []*withExtra{{A: "x"}, {A: "x", Extra: &Extra{B: "y"}, D: "z"}, {Extra: &Extra{}}} {
		sameAsEncodingJSON(t, v)
	}
	for _, text := range []string{`{"a":"x","d":"z"}`, `{"a":"x","b":"y","c":2}`, `{"c":0}`} {
		want, got := new(withExtra), new(withExtra)
		if err := json.Unmarshal([]byte(text), want); err != nil {
			t.Fatal(err)
		}
		if err := codec.Unmarshal([]byte(text), got); err != nil {
			t.Fatalf("Unmarshal(%s) = %v", text, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Unmarshal(%s) (-encoding/json +codec):\n%s", text, diff)
		}
	}
	v := &withExtra{A: "x", Extra: &Extra{}}
	codec.Normalize(v)
	if v.Extra != nil {
		t.Errorf("Normalize left the empty embedded struct: %+v", v.Extra)
	}
	v = &withExtra{Extra: &Extra{C: 3}}
	codec.Normalize(v)
	if v.Extra == nil || v.C != 3 {
		t.Errorf("Normalize dropped the embedded struct's member: %+v", v)
	}
}

// TestUnmarshalReusesDecoder: Unmarshal reuses its Decoders (an SQL store
// decodes three values of every job it claims): a value that needs no
// memory of its own (numbers, a bool, a time in the form the stores write:
// set in place, read from the input itself) is read without allocating, after
// a value whose problems the Decoder kept; and what a reused Decoder read
// before shows neither in the next value nor in its error.
func TestUnmarshalReusesDecoder(t *testing.T) {
	type v struct {
		A int       `json:"a"`
		B bool      `json:"b"`
		C int64     `json:"c"`
		T time.Time `json:"t"`
	}
	var bad v
	if err := codec.Unmarshal([]byte(`{"a": "x"}`), &bad); err == nil {
		t.Fatal(`Unmarshal({"a": "x"}) = nil, want an error`)
	}
	data := []byte(`{"a": 1, "b": true, "c": 3, "t": "2026-11-27T11:00:00.123456789Z"}`)
	var got v
	allocs := testing.AllocsPerRun(100, func() {
		if err := codec.Unmarshal(data, &got); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Unmarshal(%s) allocates %v times, want 0", data, allocs)
	}
	want := v{A: 1, B: true, C: 3, T: time.Date(2026, 11, 27, 11, 0, 0, 123456789, time.UTC)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Unmarshal(%s) (-want +got):\n%s", data, diff)
	}
	if err := codec.Unmarshal([]byte(`{"b": 1}`), &got); err == nil || !bytes.Contains([]byte(err.Error()), []byte("b")) || bytes.Contains([]byte(err.Error()), []byte("x")) {
		t.Errorf(`Unmarshal({"b": 1}) = %v, want an error about b alone`, err)
	}
}

// TestAppendUTC: AppendUTC writes what encoding/json writes for the value
// with every time in UTC, whatever their zones, and leaves the value as
// it was.
func TestAppendUTC(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 7, 1, 10, 0, 0, 123456789, berlin)
	east := time.Date(2026, 1, 1, 23, 30, 0, 5, time.FixedZone("", 5*3600+1800))
	zoned := func() *scheduler.JobRecord {
		last, next := at, east
		return &scheduler.JobRecord{Status: scheduler.JobStatus{LastExecutionTime: &last, NextExecutionTime: &next},
			Schedule: scheduler.JobSchedule{DueAt: at, Anchor: east, Current: &scheduler.Occurrence{Expected: at, At: east},
				Policy: &scheduler.PolicyState{Running: []scheduler.Run{{Occurrence: scheduler.Occurrence{Expected: at, At: east}, Until: at}}}}}
	}
	r := zoned()
	for _, v := range []any{&r.Status, &r.Schedule, &scheduler.HistoryEntry{ExpectedExecutionTime: at, StartTime: east, EndTime: at, LastExpectedTime: east}} {
		got, err := codec.AppendUTC([]byte("x"), v, true)
		if err != nil {
			t.Fatal(err)
		}
		before, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		// The same value with its times in UTC, through encoding/json.
		copyUTC := reflect.New(reflect.TypeOf(v).Elem()).Interface()
		if err := json.Unmarshal(before, copyUTC); err != nil {
			t.Fatal(err)
		}
		inUTC(reflect.ValueOf(copyUTC).Elem())
		want, err := json.Marshal(copyUTC)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != "x"+string(want) {
			t.Errorf("AppendUTC(%T) =\n%s\nwant\nx%s", v, got, want)
		}
		if after, _ := json.Marshal(v); string(after) != string(before) {
			t.Errorf("AppendUTC(%T) changed the value:\n%s\nwas\n%s", v, after, before)
		}
	}
	if !strings.Contains(string(must(codec.AppendUTC(nil, &r.Status, true))), `"2026-07-01T08:00:00.123456789Z"`) {
		t.Errorf("AppendUTC of the status does not hold the last execution in UTC")
	}
}

// inUTC sets every time reachable from v in UTC.
func inUTC(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			inUTC(v.Elem())
		}
	case reflect.Struct:
		if t, ok := v.Addr().Interface().(*time.Time); ok {
			*t = t.UTC()
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				inUTC(v.Field(i))
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			inUTC(v.Index(i))
		}
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

func TestAppendUTCWithout(t *testing.T) {
	type inner struct {
		A string `json:"a"`
		B int    `json:"b"`
	}
	type outer struct {
		A     string `json:"a"`
		B     int    `json:"b"`
		C     string `json:"c,omitempty"`
		Inner inner  `json:"inner"`
	}
	v := outer{A: "x", B: 0, C: "y", Inner: inner{A: "i", B: 2}}
	// What is read into: the members left out keep these values.
	pre := outer{A: "p", B: 9, C: "p", Inner: inner{A: "p", B: 9}}
	for _, tc := range []struct {
		name  string
		leave codec.Members
		want  string
		back  outer // pre after reading the JSON into it
	}{
		{"none", codec.Members{}, `{"a":"x","b":0,"c":"y","inner":{"a":"i","b":2}}`, v},
		{"a and b", codec.MembersOf[outer]("a").Add(codec.MembersOf[outer]("b")), `{"c":"y","inner":{"a":"i","b":2}}`,
			outer{A: "p", B: 9, C: "y", Inner: inner{A: "i", B: 2}}},
		{"all", codec.MembersOf[outer]("a", "b", "c", "inner"), `{}`, pre},
	} {
		for _, arg := range []any{&v, v} {
			got, err := codec.AppendUTCWithout([]byte("x"), arg, true, tc.leave)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != "x"+tc.want {
				t.Errorf("%s: AppendUTCWithout(%T) = %s, want x%s", tc.name, arg, got, tc.want)
			}
		}
		// What is left out reads back as what the value read into held.
		back := pre
		if err := codec.Unmarshal(must(codec.AppendUTCWithout(nil, &v, true, tc.leave)), &back); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.back, back); diff != "" {
			t.Errorf("%s: read back (-want +got):\n%s", tc.name, diff)
		}
	}
	if _, err := codec.AppendUTCWithout(nil, &v.Inner, true, codec.MembersOf[outer]("a")); err == nil {
		t.Errorf("AppendUTCWithout of an inner with members of outer: no error")
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Errorf("Add of members of another type: no panic")
			}
		}()
		codec.MembersOf[outer]("a").Add(codec.MembersOf[inner]("a"))
	}()
}
