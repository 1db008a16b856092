package httpapi

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/retry"
)

// TestEncodeJobMatchesEncodingJSON encodes random job resources and pages
// of them, with every field of every type they hold set or left empty at
// random, both by hand and with encoding/json, and wants the same bytes
// (or both refusing). A field added to a job's types and not to the hand
// encoder fails here.
func TestEncodeJobMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const n = 5000
	var refused int
	for i := range n {
		var v any
		if i%5 == 0 {
			var l JobListResult
			fillRandom(r, reflect.ValueOf(&l).Elem(), 0)
			v = l
		} else {
			var d JobDefinition
			fillRandom(r, reflect.ValueOf(&d).Elem(), 0)
			v = d
		}
		var want bytes.Buffer
		wantErr := encodeJSON(&want, v)
		got, ok := appendResponse(nil, v)
		if !ok {
			if wantErr == nil {
				t.Fatalf("value %d: hand encoder refused what encoding/json writes as\n%s", i, want.Bytes())
			}
			refused++
			continue
		}
		if wantErr != nil {
			t.Fatalf("value %d: encoding/json refuses (%v) but the hand encoder wrote\n%s", i, wantErr, got)
		}
		if got = append(got, '\n'); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("value %d:\nhand:          %s\nencoding/json: %s", i, got, want.Bytes())
		}
	}
	// Both paths must have been taken.
	if refused == 0 || refused > n/4 {
		t.Fatalf("%d of %d values refused; want some, not most", refused, n)
	}
}

// TestEncodeJobRecordMatchesResource writes random job records the way
// a GET or PUT answers them and wants the bytes writeJSON writes for
// their resource.
func TestEncodeJobRecordMatchesResource(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	h := &handler{}
	var secret, refused int
	for i := range 5000 {
		rec := &scheduler.JobRecord{Job: new(scheduler.Job)}
		fillRandom(r, reflect.ValueOf(rec.Job).Elem(), 0)
		fillRandom(r, reflect.ValueOf(&rec.Status).Elem(), 0)
		rec.State = scheduler.JobState(randomString(r))
		rec.Name = randomString(r)
		if r.IntN(4) > 0 {
			stripSecrets(&rec.Job.Action)
		}
		var sc scope
		sc.sub, sc.rg, sc.jc = randomString(r), randomString(r), randomString(r)
		got, ok := appendJobRecord(nil, sc, rec)
		if hasSecrets(&rec.Job.Action) {
			if ok {
				t.Fatalf("record %d holds secrets but was written by hand:\n%s", i, got)
			}
			secret++
			continue
		}
		var want bytes.Buffer
		wantErr := encodeJSON(&want, h.jobResource(sc, rec))
		if !ok {
			if wantErr == nil {
				t.Fatalf("record %d: hand encoder refused what encoding/json writes as\n%s", i, want.Bytes())
			}
			refused++
			continue
		}
		if got = append(got, '\n'); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("record %d:\nhand:          %s\nencoding/json: %s", i, got, want.Bytes())
		}
	}
	if secret == 0 || refused == 0 || secret+refused > 2500 {
		t.Fatalf("%d records with secrets and %d refused of 5000; want some of each, not half", secret, refused)
	}
}

// stripSecrets removes what holds a secret from a and its error actions.
func stripSecrets(a *action.Action) {
	for ; a != nil; a = a.ErrorAction {
		if a.Request != nil {
			a.Request.Authentication = nil
		}
		a.QueueMessage = nil
		if a.ServiceBusQueueMessage != nil {
			a.ServiceBusQueueMessage.Authentication = nil
		}
		if a.ServiceBusTopicMessage != nil {
			a.ServiceBusTopicMessage.Authentication = nil
		}
	}
}

// TestAppendStringMatchesEncodingJSON puts every byte value, and the
// characters JSON escapes, at every position of plain strings of up to
// 20 bytes, where the eight-at-a-time pass and the byte loop meet.
func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	specials := []string{"\u2028", "\u2029", "é", "😀", "\ufffd"}
	for c := range 256 {
		specials = append(specials, string([]byte{byte(c)}))
	}
	for n := range 21 {
		plain := strings.Repeat("a", n)
		for pos := range n + 1 {
			for _, sp := range specials {
				s := plain[:pos] + sp + plain[pos:]
				want, _ := json.Marshal(s)
				want = bytes.ReplaceAll(want, []byte(`\u003c`), []byte("<"))
				want = bytes.ReplaceAll(want, []byte(`\u003e`), []byte(">"))
				want = bytes.ReplaceAll(want, []byte(`\u0026`), []byte("&"))
				if got := appendString(nil, s); !bytes.Equal(got, want) {
					t.Fatalf("%q: got %s, want %s", s, got, want)
				}
			}
		}
	}
}

// TestEncodeOtherTypesFallBack checks that responses of other types are
// left to encoding/json.
func TestEncodeOtherTypesFallBack(t *testing.T) {
	for _, v := range []any{ErrorResponse{}, JobCollectionDefinition{}, &JobDefinition{}, JobHistoryListResult{}} {
		if _, ok := appendResponse(nil, v); ok {
			t.Errorf("%T encoded by hand", v)
		}
	}
}

var (
	timeType     = reflect.TypeFor[time.Time]()
	rawType      = reflect.TypeFor[json.RawMessage]()
	durationType = reflect.TypeFor[retry.Duration]()
)

// randomStrings are strings that JSON escapes in every way it does, and
// some that it does not.
var randomStrings = []string{
	"", "a", "Http", "http://example.com/a?b=c&d=<e>", "quote\"back\\slash", "\x00\x01\x1f\x7f",
	"\b\f\n\r\t", "line\u2028sep\u2029", "bad\xffutf8\xc3", "é中文😀", "<script>&amp;</script>",
	"\xe2\x80", "trailing\\", "\u00ff\u0100",
}

// randomString returns one of randomStrings, or several of them joined
// with runs of plain bytes.
func randomString(r *rand.Rand) string {
	if r.IntN(2) == 0 {
		return randomStrings[r.IntN(len(randomStrings))]
	}
	var b strings.Builder
	for range 1 + r.IntN(4) {
		b.WriteString(strings.Repeat("x", r.IntN(12)))
		b.WriteString(randomStrings[r.IntN(len(randomStrings))])
	}
	return b.String()
}

// randomRaw are custom payloads, valid JSON with and without spaces;
// randomInvalidRaw are ones encoding/json refuses.
var (
	randomRaw        = []string{`{}`, `{"a": 1, "b": [true, null, "x"]}`, " [1,\n 2 ] ", `"s<>&\u2028"`}
	randomInvalidRaw = []string{`{"a":`, `nope`}
)

// fillRandom sets v (settable) to a random value of its type: pointers,
// slices and maps are empty or nil sometimes, times include instants
// encoding/json refuses.
func fillRandom(r *rand.Rand, v reflect.Value, depth int) {
	switch t := v.Type(); {
	case t == timeType:
		switch r.IntN(80) {
		case 0:
			v.Set(reflect.ValueOf(time.Date(10000+r.IntN(10), 1, 1, 0, 0, 0, 0, time.UTC)))
		case 1:
			v.Set(reflect.ValueOf(time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("x", 24*3600+r.IntN(60)))))
		default:
			zones := []*time.Location{time.UTC, time.FixedZone("p", 5*3600+1800), time.FixedZone("m", -7*3600), time.FixedZone("s", 1172)}
			at := time.Unix(r.Int64N(1<<36)-1<<35, r.Int64N(3)*r.Int64N(1e9)).In(zones[r.IntN(len(zones))])
			v.Set(reflect.ValueOf(at))
		}
		return
	case t == rawType:
		switch k := r.IntN(20); {
		case k == 0:
			v.Set(reflect.ValueOf(json.RawMessage(randomInvalidRaw[r.IntN(len(randomInvalidRaw))])))
		case k > 6:
			v.Set(reflect.ValueOf(json.RawMessage(randomRaw[r.IntN(len(randomRaw))])))
		}
		return
	case t == durationType:
		ds := []retry.Duration{0, retry.Duration(time.Second), retry.Duration(r.Int64N(1 << 50)), -retry.Duration(r.Int64N(1 << 40))}
		v.Set(reflect.ValueOf(ds[r.IntN(len(ds))]))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(randomString(r))
	case reflect.Int, reflect.Int64:
		ns := []int64{0, 1, -1, r.Int64N(1000), -r.Int64N(1 << 40), 1<<63 - 1}
		v.SetInt(ns[r.IntN(len(ns))])
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Pointer:
		if depth > 4 || r.IntN(4) == 0 {
			return
		}
		p := reflect.New(v.Type().Elem())
		fillRandom(r, p.Elem(), depth+1)
		v.Set(p)
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() || f.Tag.Get("json") == "-" {
				continue
			}
			fillRandom(r, v.Field(i), depth)
		}
	case reflect.Slice:
		switch k := r.IntN(4); k {
		case 0: // nil
		case 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		default:
			s := reflect.MakeSlice(v.Type(), k+r.IntN(3), 6)
			for i := range s.Len() {
				fillRandom(r, s.Index(i), depth+1)
			}
			v.Set(s)
		}
	case reflect.Map:
		switch k := r.IntN(4); k {
		case 0: // nil
		case 1:
			v.Set(reflect.MakeMap(v.Type()))
		default:
			m := reflect.MakeMap(v.Type())
			for range k + r.IntN(4) {
				key, val := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
				fillRandom(r, key, depth+1)
				fillRandom(r, val, depth+1)
				m.SetMapIndex(key, val)
			}
			v.Set(m)
		}
	default:
		panic("fillRandom: no rule for " + v.Type().String())
	}
}
