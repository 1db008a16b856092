package sqlstore

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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
		return []int{-1, 1, 9, 10, -10, min(1<<40, math.MaxInt), -min(1<<62, math.MaxInt), int(^uint(0) >> 1), -int(^uint(0)>>1) - 1}[r.IntN(9)]
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
		if row.Status != withoutZeroCounts(string(st)) || row.Schedule != string(sc) || row.Definition != "null" {
			t.Fatalf("EncodeJob: status %s schedule %s definition %s; want %s, %s, null", row.Status, row.Schedule, row.Definition, withoutZeroCounts(string(st)), sc)
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

// withoutZeroCounts returns the JSON of a job status that encoding/json
// wrote, without the counts that are zero, as the stores keep it.
func withoutZeroCounts(status string) string {
	for _, name := range []string{"executionCount", "failureCount", "faultedCount"} {
		m := `"` + name + `":0`
		status = strings.Replace(status, m+",", "", 1)
		status = strings.Replace(status, ","+m+"}", "}", 1)
		status = strings.Replace(status, "{"+m+"}", "{}", 1)
	}
	return status
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

// TestStoredRows pins the JSON columns as earlier versions of the stores
// wrote them (each text below is what the previous encoder wrote for the
// record beside it): a record is written as the same bytes, and such a
// row reads back as the record with its times in UTC.
func TestStoredRows(t *testing.T) {
	plus2 := time.FixedZone("P", 2*3600)
	at := func(s int) time.Time { return time.Date(2030, 1, 2, 3, 4, s, 123456789, plus2) }
	last, next := at(1), at(2)
	jobs := []struct {
		name             string
		rec              *scheduler.JobRecord
		status, schedule string
	}{
		{
			name: "every member",
			rec: &scheduler.JobRecord{Collection: "sub/rg/jc", Name: "j", State: scheduler.JobEnabled,
				Status: scheduler.JobStatus{LastExecutionTime: &last, NextExecutionTime: &next, ExecutionCount: 7, FailureCount: 2, FaultedCount: 1},
				Schedule: scheduler.JobSchedule{DueAt: at(3), Anchor: at(4), NextOccurrence: at(5), Occurrences: 6, Counted: 5,
					Current: &scheduler.Occurrence{Number: 6, Expected: at(6), Tag: "tag-6", Manual: true, ErrorAction: true, Retry: 2, At: at(7),
						Trace: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", TraceState: "k=v"},
					Waiting:      &scheduler.Occurrence{Expected: at(8)},
					RunRequested: at(9), RunTrace: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00", RunTraceState: "a=b,c=d", LastFailed: true}},
			status: `{"lastExecutionTime":"2030-01-02T01:04:01.123456789Z","nextExecutionTime":"2030-01-02T01:04:02.123456789Z","executionCount":7,"failureCount":2,"faultedCount":1}`,
			schedule: `{"dueAt":"2030-01-02T01:04:03.123456789Z","anchor":"2030-01-02T01:04:04.123456789Z","nextOccurrence":"2030-01-02T01:04:05.123456789Z",` +
				`"occurrences":6,"counted":5,"current":{"number":6,"expected":"2030-01-02T01:04:06.123456789Z","tag":"tag-6","manual":true,"errorAction":true,` +
				`"retry":2,"at":"2030-01-02T01:04:07.123456789Z","trace":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01","traceState":"k=v"},` +
				`"waiting":{"expected":"2030-01-02T01:04:08.123456789Z"},"runRequested":"2030-01-02T01:04:09.123456789Z",` +
				`"runTrace":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00","runTraceState":"a=b,c=d","lastFailed":true}`,
		},
		{
			name:     "escaped string",
			rec:      &scheduler.JobRecord{Collection: "c", Name: "k", Schedule: scheduler.JobSchedule{RunTrace: "<&\"é\n>"}},
			status:   `{}`,
			schedule: `{"runTrace":"\u003c\u0026\"é\n\u003e"}`,
		},
		{
			name: "no failure",
			rec: &scheduler.JobRecord{Collection: "c", Name: "k", State: scheduler.JobCompleted,
				Status: scheduler.JobStatus{LastExecutionTime: &last, ExecutionCount: 1}},
			status:   `{"lastExecutionTime":"2030-01-02T01:04:01.123456789Z","executionCount":1}`,
			schedule: `{}`,
		},
		{
			name:     "faulted",
			rec:      &scheduler.JobRecord{Collection: "c", Name: "k", Status: scheduler.JobStatus{ExecutionCount: 2, FaultedCount: 1}},
			status:   `{"executionCount":2,"faultedCount":1}`,
			schedule: `{}`,
		},
	}
	for _, tt := range jobs {
		row, err := EncodeJob(tt.rec)
		if err != nil {
			t.Fatalf("%s: EncodeJob: %v", tt.name, err)
		}
		if row.Status != tt.status || row.Schedule != tt.schedule {
			t.Errorf("%s: EncodeJob wrote status %s and schedule %s, want %s and %s", tt.name, row.Status, row.Schedule, tt.status, tt.schedule)
		}
		got, err := DecodeJob(&JobRow{Collection: tt.rec.Collection, Name: tt.rec.Name, State: string(tt.rec.State),
			Definition: "null", Status: tt.status, Schedule: tt.schedule})
		if err != nil {
			t.Fatalf("%s: DecodeJob: %v", tt.name, err)
		}
		if diff := cmp.Diff(NormJob(tt.rec), got); diff != "" {
			t.Errorf("%s: DecodeJob (-want +got):\n%s", tt.name, diff)
		}
	}

	// A status stored with its zero counts, as stores wrote it before,
	// reads back the same.
	before, err := DecodeJob(&JobRow{Collection: "c", Name: "k", Definition: "null",
		Status: `{"lastExecutionTime":"2030-01-02T01:04:01.123456789Z","executionCount":1,"failureCount":0,"faultedCount":0}`, Schedule: `{}`})
	if err != nil {
		t.Fatalf("DecodeJob of a status with zero counts: %v", err)
	}
	if diff := cmp.Diff(NormJob(&scheduler.JobRecord{Collection: "c", Name: "k", Status: scheduler.JobStatus{LastExecutionTime: &last, ExecutionCount: 1}}), before); diff != "" {
		t.Errorf("DecodeJob of a status with zero counts (-want +got):\n%s", diff)
	}

	// An entry's JSON leaves out what its row's columns hold; rows written
	// before (full: old), and entries the columns cannot give back as
	// they are, hold those members in their JSON.
	pg, lite := HistoryColumns{Action: true}, HistoryColumns{}
	entries := []struct {
		name            string
		entry           scheduler.HistoryEntry
		collection, job string // the job's
		old             string // as written before the columns counted
		texts           map[HistoryColumns]string
	}{
		{
			name: "every member",
			entry: scheduler.HistoryEntry{Collection: "sub/rg/jc", Job: "j", ActionName: scheduler.MainAction, Status: scheduler.StatusFailed,
				ExpectedExecutionTime: at(10), StartTime: at(11), EndTime: at(12), RetryCount: 1, RepeatCount: 6,
				Message: "Http Action - Response from host 'example.com': 'InternalServerError'", ExecutionTag: "tag-6", Faulted: true},
			collection: "sub/rg/jc", job: "j",
			old: `{"collection":"sub/rg/jc","job":"j","actionName":"MainAction","status":"Failed","expectedExecutionTime":"2030-01-02T01:04:10.123456789Z",` +
				`"startTime":"2030-01-02T01:04:11.123456789Z","endTime":"2030-01-02T01:04:12.123456789Z","retryCount":1,"repeatCount":6,` +
				`"message":"Http Action - Response from host 'example.com': 'InternalServerError'","executionTag":"tag-6","faulted":true}`,
			texts: map[HistoryColumns]string{
				pg: `{"expectedExecutionTime":"2030-01-02T01:04:10.123456789Z",` +
					`"startTime":"2030-01-02T01:04:11.123456789Z","repeatCount":6,` +
					`"message":"Http Action - Response from host 'example.com': 'InternalServerError'","executionTag":"tag-6","faulted":true}`,
				lite: `{"actionName":"MainAction","expectedExecutionTime":"2030-01-02T01:04:10.123456789Z",` +
					`"startTime":"2030-01-02T01:04:11.123456789Z","retryCount":1,"repeatCount":6,` +
					`"message":"Http Action - Response from host 'example.com': 'InternalServerError'","executionTag":"tag-6","faulted":true}`,
			},
		},
		{
			name: "escaped message",
			entry: scheduler.HistoryEntry{Collection: "c", Job: "k", ActionName: scheduler.ErrorAction, Status: scheduler.StatusCompleted,
				ExpectedExecutionTime: at(13), StartTime: at(14), EndTime: at(15), Message: "a <b> & \"c\"\n\té\u2028"},
			collection: "c", job: "k",
			old: `{"collection":"c","job":"k","actionName":"ErrorAction","status":"Completed","expectedExecutionTime":"2030-01-02T01:04:13.123456789Z",` +
				`"startTime":"2030-01-02T01:04:14.123456789Z","endTime":"2030-01-02T01:04:15.123456789Z","retryCount":0,"repeatCount":0,` +
				`"message":"a \u003cb\u003e \u0026 \"c\"\n\té\u2028"}`,
			texts: map[HistoryColumns]string{
				pg: `{"expectedExecutionTime":"2030-01-02T01:04:13.123456789Z",` +
					`"startTime":"2030-01-02T01:04:14.123456789Z","repeatCount":0,` +
					`"message":"a \u003cb\u003e \u0026 \"c\"\n\té\u2028"}`,
				lite: `{"actionName":"ErrorAction","expectedExecutionTime":"2030-01-02T01:04:13.123456789Z",` +
					`"startTime":"2030-01-02T01:04:14.123456789Z","retryCount":0,"repeatCount":0,` +
					`"message":"a \u003cb\u003e \u0026 \"c\"\n\té\u2028"}`,
			},
		},
		{
			// Another job's names, a status in another spelling, an end
			// time beyond the column's nanoseconds and a retry count
			// beyond the integer column: the JSON keeps them.
			name: "what the columns cannot give back",
			entry: scheduler.HistoryEntry{Collection: "other", Job: "", ActionName: scheduler.MainAction, Status: "completed",
				ExpectedExecutionTime: at(16), StartTime: at(16), EndTime: time.Date(2300, 1, 2, 3, 4, 16, 0, time.UTC), RetryCount: min(1<<40, math.MaxInt)},
			collection: "c", job: "k",
			texts: map[HistoryColumns]string{
				pg: `{"collection":"other","job":"","status":"completed","expectedExecutionTime":"2030-01-02T01:04:16.123456789Z",` +
					`"startTime":"2030-01-02T01:04:16.123456789Z","endTime":"2300-01-02T03:04:16Z","retryCount":1099511627776,"repeatCount":0}`,
				lite: `{"collection":"other","job":"","actionName":"MainAction","status":"completed","expectedExecutionTime":"2030-01-02T01:04:16.123456789Z",` +
					`"startTime":"2030-01-02T01:04:16.123456789Z","endTime":"2300-01-02T03:04:16Z","retryCount":1099511627776,"repeatCount":0}`,
			},
		},
	}
	for _, tt := range entries {
		want := NormHistory(tt.entry)
		if want.Status == "completed" {
			want.Status = scheduler.StatusCompleted // as the JSON's status always read
		}
		for _, c := range []HistoryColumns{pg, lite} {
			row, err := c.EncodeHistory(&tt.entry, tt.collection, tt.job)
			if err != nil {
				t.Fatalf("%s, %+v: EncodeHistory: %v", tt.name, c, err)
			}
			if row.Entry != tt.texts[c] {
				t.Errorf("%s, %+v: EncodeHistory wrote\n%s\nwant\n%s", tt.name, c, row.Entry, tt.texts[c])
			}
			if row.Collection != tt.collection || row.Job != tt.job || row.Status != string(tt.entry.Status) ||
				row.ActionName != string(tt.entry.ActionName) || int(row.RetryCount) != int(int32(tt.entry.RetryCount)) {
				t.Errorf("%s, %+v: EncodeHistory's columns %+v", tt.name, c, row)
			}
			got, err := c.DecodeHistory(row)
			if err != nil {
				t.Fatalf("%s, %+v: DecodeHistory: %v", tt.name, c, err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s, %+v: DecodeHistory (-want +got):\n%s", tt.name, c, diff)
			}
			if tt.old == "" {
				continue
			}
			// A row written before: the whole entry in its JSON.
			old := *row
			old.Entry = tt.old
			if got, err = c.DecodeHistory(&old); err != nil {
				t.Fatalf("%s, %+v: DecodeHistory of the old row: %v", tt.name, c, err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s, %+v: DecodeHistory of the old row (-want +got):\n%s", tt.name, c, diff)
			}
		}
	}
}

// TestStoredMonthlyOccurrences: a definition is stored with
// monthlyOccurrences[].Occurrence as the published Microsoft.Scheduler
// definition spells it, and rows written before, in lower case, read back
// the same.
func TestStoredMonthlyOccurrences(t *testing.T) {
	const old = `{"action":{"type":"Http","request":{"uri":"http://a/","method":"GET"}},` +
		`"recurrence":{"frequency":"Month","schedule":{"monthlyOccurrences":[{"day":"Friday","occurrence":-1},{"day":"Monday"}]}}}`
	written := strings.ReplaceAll(old, `"occurrence"`, `"Occurrence"`)
	for _, def := range []string{old, written} {
		got, err := DecodeJob(&JobRow{Collection: "c", Name: "j", Definition: def, Status: "{}", Schedule: "{}"})
		if err != nil {
			t.Fatalf("DecodeJob(%s): %v", def, err)
		}
		if occ := got.Job.Recurrence.Schedule.MonthlyOccurrences; len(occ) != 2 || occ[0].Day != "Friday" || occ[0].Occurrence != -1 || occ[1].Occurrence != 0 {
			t.Errorf("DecodeJob(%s): monthlyOccurrences %+v, want [{Friday -1} {Monday 0}]", def, occ)
		}
		row, err := EncodeJob(got)
		if err != nil {
			t.Fatal(err)
		}
		if row.Definition != written {
			t.Errorf("EncodeJob of the row %s wrote\n%s\nwant\n%s", def, row.Definition, written)
		}
	}
}

// TestEncodeRecordAllocations checks that the row of a claimed job's
// outcome and its history entry are encoded into one string each, not a
// buffer and a copy per JSON value.
func TestEncodeRecordAllocations(t *testing.T) {
	at := time.Date(2026, 11, 27, 11, 0, 0, 123456789, time.UTC)
	next := at.Add(time.Minute)
	j := &scheduler.JobRecord{Collection: "c", Name: "n", State: scheduler.JobEnabled, ETag: "e", Version: 3,
		Created: at, Updated: at, LeaseOwner: "o", LeaseUntil: at.Add(time.Minute),
		Status:   scheduler.JobStatus{LastExecutionTime: &at, NextExecutionTime: &next, ExecutionCount: 4},
		Schedule: scheduler.JobSchedule{DueAt: next, Anchor: at}}
	h := scheduler.HistoryEntry{Collection: "c", Job: "n", ActionName: scheduler.MainAction, Status: scheduler.StatusCompleted,
		ExpectedExecutionTime: at, StartTime: at, EndTime: at.Add(time.Millisecond), RepeatCount: 4, ExecutionTag: "0123456789abcdef"}
	for _, c := range []struct {
		name string
		max  float64
		f    func() error
	}{
		// The row and the one string of its status and schedule, written
		// with their times in UTC (20 when each value had a buffer and a
		// string, 5 with a copy of the record and of each status time).
		{"EncodeJobState", 2, func() error { _, err := EncodeJobState(j); return err }},
		// The row and the entry's string (12 before, 4 with the end time
		// boxed and a copy of the entry).
		{"EncodeHistory", 2, func() error { _, err := HistoryColumns{Action: true}.EncodeHistory(&h, "c", "n"); return err }},
	} {
		if err := c.f(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if raceBuild {
			c.max += 4 // buffers the pool dropped, grown again
		}
		if got := testing.AllocsPerRun(100, func() { _ = c.f() }); got > c.max {
			t.Errorf("%s: %v allocations, want at most %v", c.name, got, c.max)
		}
	}
}

// TestTextsAsEncode checks that the rows a Texts encodes are those of
// EncodeRecord (without tags) and EncodeHistory, each still whole after
// the rows encoded after it in the same batch moved the buffer, in each
// of several batches that follow a Reset; and that once the buffer
// holds a batch, encoding the same batch again allocates nothing.
func TestTextsAsEncode(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var texts Texts
	for round := range 3 {
		type pair struct {
			got, want JobRow
			gotH      HistoryRow
			wantH     *HistoryRow
		}
		var rows []pair
		for i := range 200 {
			j := &scheduler.JobRecord{Collection: "c", Name: fmt.Sprint(i), State: scheduler.JobEnabled, ETag: "e", Version: 3,
				Created: randTime(r), Updated: randTime(r), Status: randStatus(r), Schedule: randSchedule(r),
				Tags: map[string]string{"t": "v"}, Job: &scheduler.Job{}}
			keep := i%2 == 0
			h := scheduler.HistoryEntry{Collection: "c", Job: j.Name, Message: randString(r), EndTime: randTime(r)}
			want, werr := EncodeRecord(j, keep, nil)
			wantH, herr := HistoryColumns{Action: i%3 == 0}.EncodeHistory(&h, "c", j.Name)
			var p pair
			err := texts.EncodeRecord(&p.got, j, keep, nil)
			if (err != nil) != (werr != nil) {
				t.Fatalf("Texts.EncodeRecord: %v; EncodeRecord: %v", err, werr)
			}
			var gerr error
			p.gotH, gerr = texts.EncodeHistory(HistoryColumns{Action: i%3 == 0}, &h, "c", j.Name)
			if (gerr != nil) != (herr != nil) {
				t.Fatalf("Texts.EncodeHistory: %v; EncodeHistory: %v", gerr, herr)
			}
			if err != nil || gerr != nil {
				continue
			}
			want.Tags = "" // a record does not write them
			p.want, p.wantH = *want, wantH
			rows = append(rows, p)
		}
		for i, p := range rows {
			if diff := cmp.Diff(p.want, p.got); diff != "" {
				t.Fatalf("round %d, row %d: Texts.EncodeRecord (-EncodeRecord +got):\n%s", round, i, diff)
			}
			if diff := cmp.Diff(*p.wantH, p.gotH); diff != "" {
				t.Fatalf("round %d, entry %d: Texts.EncodeHistory (-EncodeHistory +got):\n%s", round, i, diff)
			}
		}
		texts.Reset()
	}

	at := time.Date(2026, 11, 27, 11, 0, 0, 123456789, time.UTC)
	j := &scheduler.JobRecord{Collection: "c", Name: "n", State: scheduler.JobEnabled, ETag: "e", Version: 3,
		Created: at, Updated: at, Status: scheduler.JobStatus{LastExecutionTime: &at, ExecutionCount: 4},
		Schedule: scheduler.JobSchedule{DueAt: at.Add(time.Minute), Anchor: at}}
	h := scheduler.HistoryEntry{Collection: "c", Job: "n", ActionName: scheduler.MainAction, Status: scheduler.StatusCompleted,
		StartTime: at, EndTime: at.Add(time.Millisecond), ExecutionTag: "0123456789abcdef"}
	var row JobRow
	batch := func() {
		texts.Reset()
		for range 100 {
			if err := texts.EncodeRecord(&row, j, true, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := texts.EncodeHistory(HistoryColumns{Action: true}, &h, "c", "n"); err != nil {
				t.Fatal(err)
			}
		}
	}
	batch()
	if got := testing.AllocsPerRun(20, batch); got != 0 {
		t.Errorf("a batch of 100 records again: %v allocations, want 0", got)
	}
}

// answerDecoder decodes the rows of answers that differ only in their
// definition texts, each row's text in one buffer that the next row
// overwrites, as a scanner reads them.
type answerDecoder struct {
	t   *testing.T
	row *JobRow
	buf []byte // the scanner's, reused from row to row
}

func newAnswerDecoder(t *testing.T) *answerDecoder {
	row, err := EncodeJob(&scheduler.JobRecord{Collection: "c", Name: "n", State: scheduler.JobEnabled, ETag: "e", Version: 3})
	if err != nil {
		t.Fatal(err)
	}
	return &answerDecoder{t: t, row: row}
}

// decode returns the records of an answer of rows with the definition
// texts, decoded with defs.
func (a *answerDecoder) decode(texts []string, defs *Definitions) []*scheduler.JobRecord {
	out := make([]*scheduler.JobRecord, len(texts))
	for i, text := range texts {
		a.buf = append(a.buf[:0], text...)
		a.row.Definition = view(a.buf, 0, len(a.buf))
		j, err := DecodeJobShared(a.row, defs)
		if err != nil {
			a.t.Fatal(err)
		}
		out[i] = j
	}
	clear(a.buf) // what the next answer would write there
	return out
}

// TestDecodeJobSharedDefinitions: rows of one answer with the same
// definition text share the decoded definition, though the text of each
// row is overwritten by the next (as a scanner's is); keeping the texts
// costs no allocation per row beyond what decoding without sharing does.
func TestDecodeJobSharedDefinitions(t *testing.T) {
	const n = 200
	texts := make([]string, n)
	for i := range texts {
		texts[i] = fmt.Sprintf(`{"action":{"type":"Http","request":{"uri":"http://127.0.0.1/%d","method":"GET"}}}`, i%(n/2))
	}
	a := newAnswerDecoder(t)
	decodeAll := func(defs *Definitions) []*scheduler.JobRecord { return a.decode(texts, defs) }
	got := decodeAll(new(Definitions))
	for i, j := range got {
		uri := j.Job.Action.Request.URI
		if want := fmt.Sprintf("http://127.0.0.1/%d", i%(n/2)); uri != want {
			t.Fatalf("row %d: definition with URI %q, want %q", i, uri, want)
		}
		if other := got[(i+n/2)%n]; other.Job != j.Job {
			t.Errorf("rows %d and %d have the same definition text, but not the same definition", i, (i+n/2)%n)
		}
	}

	for i := range texts { // all different: every row decodes its own
		texts[i] = fmt.Sprintf(`{"action":{"type":"Http","request":{"uri":"http://127.0.0.1/%d","method":"GET"}}}`, i)
	}
	// Averaged over many runs: under -race, sync.Pool drops a quarter of
	// the decoders it is given, at random, so each figure varies by some
	// tens of allocations over 10 runs (a bound of 40 failed with 43).
	alone := testing.AllocsPerRun(100, func() { decodeAll(nil) })
	shared := testing.AllocsPerRun(100, func() { decodeAll(new(Definitions)) })
	// The map as it grows, and a buffer for every few dozen texts: 20
	// without -race (a copy of each text was one allocation a row, 200).
	limit := alone + n/5
	if raceBuild {
		limit += n / 10 // 15–26 over 100 runs with -race
	}
	if shared > limit {
		t.Errorf("decoding %d rows of different definitions, keeping them to share: %v allocations, want at most %v (%v without keeping them)", n, shared, limit, alone)
	}
}

// TestDefinitionsReset: Definitions reset for the next answer share
// nothing of the answer before, and keep the definitions of an answer
// of different ones with no allocation beyond what decoding without
// sharing does.
func TestDefinitionsReset(t *testing.T) {
	const n = 50
	texts := make([]string, n)
	for i := range texts {
		texts[i] = fmt.Sprintf(`{"startTime":"2030-01-01T00:00:%02dZ","action":{"type":"Noop","custom":{"i":%d}}}`, i%60, i)
	}
	a := newAnswerDecoder(t)
	decodeAll := func(defs *Definitions) []*scheduler.JobRecord {
		if defs != nil {
			defs.Reset()
		}
		return a.decode(texts, defs)
	}
	var defs Definitions
	first := decodeAll(&defs)
	second := decodeAll(&defs)
	for i := range second {
		if second[i].Job == first[i].Job {
			t.Fatalf("row %d of the second answer shares the definition of the first", i)
		}
		if diff := cmp.Diff(first[i].Job, second[i].Job); diff != "" {
			t.Fatalf("row %d: definitions of the two answers differ (-first +second):\n%s", i, diff)
		}
	}
	if got, want := string(first[7].Job.Action.Custom), `{"i":7}`; got != want {
		t.Errorf("row 7 of the first answer after the second: custom %s, want %s", got, want)
	}
	alone := testing.AllocsPerRun(100, func() { decodeAll(nil) })
	reused := testing.AllocsPerRun(100, func() { decodeAll(&defs) })
	limit := alone
	if raceBuild {
		limit += n / 10 // sync.Pool drops decoders at random under -race
	}
	if reused > limit {
		t.Errorf("decoding %d rows of different definitions with Definitions reset: %v allocations, want at most %v (without keeping them)", n, reused, limit)
	}
}

// fakeJobRow is a row of JobCols, then an extra int64, as a driver hands
// it over: database/sql gives a Scanner the driver's value (strings and
// int64s, nil for NULL); with driverBytes, texts go to a ScanBytes method
// first, as pgx does, in a buffer it then overwrites.
type fakeJobRow struct {
	vals        []any
	driverBytes bool
	buf         []byte
}

func (f *fakeJobRow) Scan(dest ...any) error {
	if len(dest) != len(f.vals) {
		return fmt.Errorf("fakeJobRow: %d destinations, want %d", len(dest), len(f.vals))
	}
	for i, d := range dest {
		v := f.vals[i]
		if b, ok := d.(interface{ ScanBytes([]byte) error }); ok && f.driverBytes {
			var src []byte
			if s, ok := v.(string); ok {
				f.buf = append(f.buf[:0], s...)
				src = f.buf
			}
			if err := b.ScanBytes(src); err != nil {
				return err
			}
			clear(f.buf) // the driver's memory is gone
			continue
		}
		switch d := d.(type) {
		case sql.Scanner:
			if err := d.Scan(v); err != nil {
				return err
			}
		case *string:
			*d = v.(string)
		case *int64:
			*d = v.(int64)
		default:
			return fmt.Errorf("fakeJobRow: destination %T", d)
		}
	}
	return nil
}

// TestJobScannerReuses: a JobScanner reads the rows of an answer into
// the same destinations; the claim decodes what it read without copying
// its JSON first.
func TestJobScannerReuses(t *testing.T) {
	at := time.Date(2026, 11, 27, 11, 0, 0, 123456789, time.UTC)
	src, err := EncodeJob(&scheduler.JobRecord{Collection: "c", Name: "n", State: scheduler.JobEnabled, ETag: "e", Version: 3,
		Created: at, Updated: at, LeaseOwner: "o", LeaseUntil: at.Add(time.Minute), Incarnation: -77,
		Status:   scheduler.JobStatus{ExecutionCount: 4, LastExecutionTime: &at, NextExecutionTime: &at},
		Schedule: scheduler.JobSchedule{DueAt: at, Anchor: at}, Tags: map[string]string{"k": "v{,}\"\u00e9"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, driverBytes := range []bool{false, true} {
		f := &fakeJobRow{driverBytes: driverBytes, vals: []any{src.Collection, src.Name, src.Definition, src.State, src.Status, src.Schedule, src.ETag,
			src.Version, src.Created, src.Updated, nil, src.LeaseOwner, src.LeaseUntil, src.Tags, src.Incarnation, int64(9)}}
		want := *src
		want.DueAt, want.HasDue = 0, false
		var s JobScanner
		var extra int64
		row, err := s.Scan(f, &extra)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(&want, row); diff != "" || extra != 9 {
			t.Errorf("driverBytes %v: Scan (-want +got):\n%s\nextra %d, want 9", driverBytes, diff, extra)
		}
		if allocs := testing.AllocsPerRun(100, func() { _, _ = s.Scan(f, &extra) }); allocs != 0 {
			t.Errorf("driverBytes %v: JobScanner.Scan allocates %v times a row, want 0", driverBytes, allocs)
		}
		// The record alone: no copy of the JSON of its status and schedule,
		// nor of their times or the times' text (a row without tags): the
		// record and its two status times (5 when the times were copied
		// to set them in UTC).
		limit := 3.0
		if raceBuild {
			limit += 2 // decoders the pool dropped
		}
		f.vals[13] = nil
		row, _ = s.Scan(f, &extra)
		f.vals[13] = src.Tags
		if allocs := testing.AllocsPerRun(100, func() { _, _ = DecodeJobShared(row, nil) }); allocs > limit {
			t.Errorf("driverBytes %v: DecodeJobShared allocates %v times, want at most %v", driverBytes, allocs, limit)
		}
		// A row's name and ETag stay as they were after the next Scan.
		name, etag := row.Name, row.ETag
		f.vals[1], f.vals[6] = "other", "tag"
		if next, err := s.Scan(f, &extra); err != nil || next.Name != "other" || next.ETag != "tag" {
			t.Fatalf("driverBytes %v: the next row: %v, %v", driverBytes, next, err)
		}
		if name != src.Name || etag != src.ETag {
			t.Errorf("driverBytes %v: after the next Scan, the row before has name %q and ETag %q, want %q and %q", driverBytes, name, etag, src.Name, src.ETag)
		}
		f.vals[1], f.vals[6] = src.Name, src.ETag
		// What a scanner returned stays as it was until its next Scan, and
		// a row of ScanJobRow for ever.
		kept, err := ScanJobRow(f, &extra)
		if err != nil {
			t.Fatal(err)
		}
		f.vals[4], f.vals[13] = `{"executionCount":5}`, nil
		if _, err := ScanJobRow(f, &extra); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(&want, kept); diff != "" {
			t.Errorf("driverBytes %v: a row of ScanJobRow after another (-want +got):\n%s", driverBytes, diff)
		}
	}
}

// TestEncodeLeavesTheRecord: encoding a record sets the times of its copy
// in UTC, not the caller's.
func TestEncodeLeavesTheRecord(t *testing.T) {
	zone := time.FixedZone("east", 5*3600+1800)
	last, next := time.Date(2026, 11, 27, 11, 0, 0, 5, zone), time.Date(2026, 11, 27, 12, 0, 0, 7, zone)
	j := &scheduler.JobRecord{Collection: "c", Name: "n", State: scheduler.JobEnabled,
		Status: scheduler.JobStatus{LastExecutionTime: &last, NextExecutionTime: &next}}
	if _, err := EncodeJobState(j); err != nil {
		t.Fatal(err)
	}
	if _, err := EncodeJob(j); err != nil {
		t.Fatal(err)
	}
	n := NormJob(j)
	if last.Location() != zone || next.Location() != zone || j.Status.LastExecutionTime != &last || j.Status.NextExecutionTime != &next {
		t.Errorf("the record's status times changed: %v, %v", *j.Status.LastExecutionTime, *j.Status.NextExecutionTime)
	}
	if l := n.Status.LastExecutionTime; l == &last || l.Location() != time.UTC || !l.Equal(last) {
		t.Errorf("NormJob: last execution %v, want %v in UTC, a copy", *l, last)
	}
}
