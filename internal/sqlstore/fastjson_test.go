package sqlstore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
)

// randString returns a string that is often plain and sometimes holds a
// character encoding/json escapes (or invalid UTF-8).
func randString(r *rand.Rand) string {
	const plain = "abcXYZ019-_.:/ =?!{}[]"
	const odd = "\"\\<>&\n\t\x00\x7f\u00e9\u2028\xff"
	n := r.IntN(6)
	var b strings.Builder
	for range n {
		if r.IntN(12) == 0 {
			o := []rune(odd)
			if k := r.IntN(len(o) + 1); k < len(o) {
				b.WriteRune(o[k])
			} else {
				b.WriteByte(0xff)
			}
		} else {
			b.WriteByte(plain[r.IntN(len(plain))])
		}
	}
	return b.String()
}

var zones = []*time.Location{time.UTC, time.FixedZone("A", 3600), time.FixedZone("B", -5*3600-1800), time.FixedZone("C", 59)}

// randTime returns the zero Time now and then, times of every
// precision, in several zones, and rarely a year encoding/json refuses.
func randTime(r *rand.Rand) time.Time {
	switch r.IntN(10) {
	case 0:
		return time.Time{}
	case 1:
		years := []int{-1, 0, 1, 9999, 10000, 1677, 2263}
		return time.Date(years[r.IntN(len(years))], time.Month(1+r.IntN(12)), 1+r.IntN(28), r.IntN(24), 0, 0, 0, zones[r.IntN(len(zones))])
	}
	ns := []int{0, 1, 10, 120_000_000, 123_456_789, 999_999_999, 500}
	t := time.Date(1970+r.IntN(100), time.Month(1+r.IntN(12)), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60), ns[r.IntN(len(ns))], zones[r.IntN(len(zones))])
	if r.IntN(4) == 0 {
		t = time.Now().Add(time.Duration(r.Int64N(1e12))) // with a monotonic reading
	}
	return t
}

func randInt(r *rand.Rand) int {
	switch r.IntN(4) {
	case 0:
		return 0
	case 1:
		return []int{-1, 1, 9, 10, -10, 1 << 40, -(1 << 62), int(^uint(0) >> 1), -int(^uint(0)>>1) - 1}[r.IntN(9)]
	}
	return r.IntN(1000)
}

func randTimep(r *rand.Rand) *time.Time {
	if r.IntN(3) == 0 {
		return nil
	}
	t := randTime(r)
	return &t
}

func randOccurrence(r *rand.Rand) *scheduler.Occurrence {
	if r.IntN(2) == 0 {
		return nil
	}
	return &scheduler.Occurrence{
		Number: randInt(r), Expected: randTime(r), Tag: randString(r), Manual: r.IntN(2) == 0,
		ErrorAction: r.IntN(2) == 0, Retry: randInt(r), At: randTime(r), Trace: randString(r), TraceState: randString(r),
	}
}

func randStatus(r *rand.Rand) scheduler.JobStatus {
	return scheduler.JobStatus{LastExecutionTime: randTimep(r), NextExecutionTime: randTimep(r),
		ExecutionCount: randInt(r), FailureCount: randInt(r), FaultedCount: randInt(r)}
}

func randSchedule(r *rand.Rand) scheduler.JobSchedule {
	return scheduler.JobSchedule{
		DueAt: randTime(r), Anchor: randTime(r), NextOccurrence: randTime(r), Occurrences: randInt(r), Counted: randInt(r),
		Current: randOccurrence(r), Waiting: randOccurrence(r), RunRequested: randTime(r),
		RunTrace: randString(r), RunTraceState: randString(r), LastFailed: r.IntN(2) == 0,
	}
}

func randHistory(r *rand.Rand) scheduler.HistoryEntry {
	return scheduler.HistoryEntry{
		Collection: randString(r), Job: randString(r), ActionName: scheduler.ActionName(randString(r)),
		Status: scheduler.ExecutionStatus(randString(r)), ExpectedExecutionTime: randTime(r), StartTime: randTime(r),
		EndTime: randTime(r), RetryCount: randInt(r), RepeatCount: randInt(r), Message: randString(r),
		ExecutionTag: randString(r), Faulted: r.IntN(2) == 0,
	}
}

// sameEncoding checks that the writer's bytes are encoding/json's for
// want (the value with its times in UTC), or that the writer declined.
// It returns whether the writer wrote.
func sameEncoding(t *testing.T, what string, got []byte, ok bool, want any) bool {
	t.Helper()
	w, err := json.Marshal(want)
	if !ok {
		return false
	}
	if err != nil {
		t.Fatalf("%s: wrote %s where encoding/json fails: %v", what, got, err)
	}
	if !bytes.Equal(got, w) {
		t.Fatalf("%s:\n got %s\nwant %s", what, got, w)
	}
	return true
}

// TestWritersMatchEncodingJSON compares the status, schedule and history
// writers with encoding/json on random values that set every field, and
// checks that they write most of them (the plain ones) themselves.
func TestWritersMatchEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	wrote := map[string]int{}
	const n = 20000
	for range n {
		// NormJob copies the record with its times in UTC; the writers
		// get the original and must put times in UTC themselves.
		st, raw := randStatus(r), randSchedule(r)
		norm := NormJob(&scheduler.JobRecord{Status: st, Schedule: raw})
		b, ok := appendStatus([]byte("x"), &st)
		if ok && b[0] != 'x' {
			t.Fatal("appendStatus does not append")
		}
		if ok {
			b = b[1:]
		}
		if sameEncoding(t, "status", b, ok, norm.Status) {
			wrote["status"]++
		}
		b, ok = appendSchedule(nil, &raw)
		if sameEncoding(t, "schedule", b, ok, norm.Schedule) {
			wrote["schedule"]++
		}
		h := randHistory(r)
		b, ok = appendHistory(nil, &h)
		if sameEncoding(t, "history", b, ok, NormHistory(h)) {
			wrote["history"]++
		}
	}
	for _, k := range []string{"status", "schedule", "history"} {
		if wrote[k] < n/20 {
			t.Errorf("%s: the writer wrote %d of %d values itself", k, wrote[k], n)
		}
		if wrote[k] == n {
			t.Errorf("%s: the writer never declined", k)
		}
	}
}

// TestReadersMatchEncodingJSON reads random documents, as the writers
// write them and altered, with the readers and with encoding/json: when a
// reader accepts a document, it must decode what encoding/json decodes.
func TestReadersMatchEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	read := map[string]int{}
	alter := func(b []byte) string {
		if len(b) == 0 || r.IntN(3) != 0 {
			return string(b)
		}
		b = bytes.Clone(b)
		switch i := r.IntN(len(b)); r.IntN(5) {
		case 0:
			return string(b[:i]) // cut short
		case 1:
			b[i] = "0123456789\",:{}-.eZ \\tnul"[r.IntN(25)]
		case 2:
			return string(b[:i]) + " " + string(b[i:])
		case 3:
			return string(b) + "x"
		case 4:
			return strings.Replace(string(b), "Count\":", "Count\":0", 1)
		}
		return string(b)
	}
	const n = 20000
	for range n {
		st := randStatus(r)
		sc := randSchedule(r)
		for _, text := range []string{alter(mustMarshal(t, st)), alter(mustMarshal(t, sc))} {
			if agrees(t, "status", text, readStatus, unmarshalStatus) {
				read["status"]++
			}
			if agrees(t, "schedule", text, readSchedule, unmarshalSchedule) {
				read["schedule"]++
			}
		}
	}
	for _, k := range []string{"status", "schedule"} {
		if read[k] < n/10 {
			t.Errorf("%s: the reader read %d documents", k, read[k])
		}
	}
}

// agrees checks that a reader that accepts text decodes what
// encoding/json decodes, and that unmarshal always decodes it so (value
// and error); it returns whether the reader accepted text.
func agrees[T any](t *testing.T, what, text string, read func(string, *T) bool, unmarshal func(string, *T) error) bool {
	t.Helper()
	var fast, want T
	werr := json.Unmarshal([]byte(text), &want)
	ok := read(text, &fast)
	if ok && (werr != nil || !reflect.DeepEqual(fast, want)) {
		t.Fatalf("%s %s: read %+v; encoding/json %+v, %v", what, text, fast, want, werr)
	}
	var got T
	if err := unmarshal(text, &got); (err == nil) != (werr == nil) || (err == nil && !reflect.DeepEqual(got, want)) {
		t.Fatalf("%s %s: unmarshal = %+v, %v; encoding/json %+v, %v", what, text, got, err, want, werr)
	}
	return ok
}

func mustMarshal(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return nil // a year encoding/json refuses
	}
	return b
}

// TestReaderEdges pins documents the readers must leave to encoding/json
// or read as it does.
func TestReaderEdges(t *testing.T) {
	for _, text := range []string{
		`{"executionCount":-0,"failureCount":0,"faultedCount":0}`,
		`{"executionCount":01,"failureCount":0,"faultedCount":0}`,
		`{"executionCount":1.0,"failureCount":0,"faultedCount":0}`,
		`{"executionCount":1e2,"failureCount":0,"faultedCount":0}`,
		`{"executionCount":99999999999999999999,"failureCount":0,"faultedCount":0}`,
		`{"executionCount":1,"executionCount":2}`,
		`{"ExecutionCount":1}`,
		`{"lastExecutionTime":null,"executionCount":1}`,
		`{"lastExecutionTime":"2030-01-02T03:04:05+01:00","executionCount":1}`,
		`{"lastExecutionTime":"2030-01-02T24:04:05Z","executionCount":1}`,
		`{"lastExecutionTime":"2030-01-02T03:04:05\u005a","executionCount":1}`,
		`{}`, `null`, ``, `{`,
	} {
		agrees(t, "status", text, readStatus, unmarshalStatus)
	}
	for _, text := range []string{
		`{"current":{"expected":"2030-01-02T03:04:05Z","tag":"a\"b"}}`,
		`{"current":{"expected":"2030-01-02T03:04:05Z","manual":false}}`,
		`{"current":{"expected":"2030-01-02T03:04:05Z"},"current":{"retry":1,"expected":"2031-01-02T03:04:05Z"}}`,
		`{"current":null}`,
		`{"runTrace":"\u00e9"}`,
		`{"runTrace":"é"}`,
		`{"lastFailed":true}`,
		`{"lastFailed":tru}`,
	} {
		agrees(t, "schedule", text, readSchedule, unmarshalSchedule)
	}
}

// TestEncodeJobAsBefore checks EncodeJob and DecodeJob against the
// encoding/json round trip of a normalised record, on records the
// writers handle and on ones they leave to encoding/json.
func TestEncodeJobAsBefore(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 5000 {
		j := &scheduler.JobRecord{Collection: "c", Name: "n", State: scheduler.JobState("Enabled"), ETag: "e", Version: 3,
			Created: randTime(r), Updated: randTime(r), LeaseOwner: "o", LeaseUntil: randTime(r),
			Status: randStatus(r), Schedule: randSchedule(r)}
		norm := NormJob(j)
		st, serr := json.Marshal(norm.Status)
		sc, cerr := json.Marshal(norm.Schedule)
		row, err := EncodeJob(j)
		if serr != nil || cerr != nil {
			if err == nil {
				t.Fatalf("EncodeJob: no error where encoding/json fails (%v, %v)", serr, cerr)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if row.Status != string(st) || row.Schedule != string(sc) || row.Definition != "null" {
			t.Fatalf("EncodeJob: status %s schedule %s definition %s; want %s, %s, null", row.Status, row.Schedule, row.Definition, st, sc)
		}
		if row.Created != NanosInt(j.Created) || row.HasCreated == j.Created.IsZero() || row.DueAt != NanosInt(j.Schedule.DueAt) ||
			row.HasDue == j.Schedule.DueAt.IsZero() || row.LeaseUntil != NanosInt(j.LeaseUntil) || row.Updated != NanosInt(j.Updated) {
			t.Fatalf("EncodeJob: times %+v of %+v", row, j)
		}
		back, err := DecodeJob(row)
		if err != nil {
			t.Fatal(err)
		}
		want := *NormJob(&scheduler.JobRecord{Collection: "c", Name: "n", State: "Enabled", ETag: "e", Version: 3,
			Created: Time(row.Created, row.HasCreated), Updated: Time(row.Updated, row.HasUpdated), LeaseOwner: "o",
			LeaseUntil: Time(row.LeaseUntil, row.HasLease)})
		if err := json.Unmarshal(st, &want.Status); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(sc, &want.Schedule); err != nil {
			t.Fatal(err)
		}
		want = *NormJob(&want)
		if !reflect.DeepEqual(back, &want) {
			t.Fatalf("DecodeJob:\n got %+v\nwant %+v", back, &want)
		}
	}
}

// TestEncodeJobShared: records that share a definition get it encoded
// once; each record gets the encoding of its own definition, whatever
// the order, and a definition equal to another but not the same is
// encoded for itself.
func TestEncodeJobShared(t *testing.T) {
	job := func(uri string) *scheduler.Job {
		j := new(scheduler.Job)
		if err := json.Unmarshal([]byte(`{"action":{"type":"Http","request":{"uri":"`+uri+`","method":"GET"}}}`), j); err != nil {
			t.Fatal(err)
		}
		return j
	}
	a, b, a2 := job("http://a/"), job("http://b/"), job("http://a/")
	defs := map[*scheduler.Job]string{}
	for i, def := range []*scheduler.Job{a, b, nil, a, a2, b, nil} {
		row, err := EncodeJobShared(&scheduler.JobRecord{Collection: "c", Name: fmt.Sprint(i), Job: def}, defs)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(def)
		if row.Definition != string(want) {
			t.Errorf("record %d: definition %s, want %s", i, row.Definition, want)
		}
	}
	if len(defs) != 3 || defs[a] == "" || defs[b] == "" || defs[a2] == "" {
		t.Errorf("encoded definitions %v, want those of a, b and a2", defs)
	}
	// A definition already in defs is taken from it, not encoded again.
	defs[a] = `"kept"`
	if row, err := EncodeJobShared(&scheduler.JobRecord{Job: a}, defs); err != nil || row.Definition != `"kept"` {
		t.Errorf("EncodeJobShared of a known definition = %+v, %v; want the kept text", row, err)
	}
}
