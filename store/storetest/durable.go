package storetest

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/recurrence"
	"github.com/jobclock/scheduler/retry"
)

// RunDurable runs the cases that only a store kept outside the process can
// pass, or that need several Store values over one database: restart
// persistence, lease expiry and takeover between instances, concurrent
// claimers in several instances never getting the same occurrence, and
// exact round trips of definitions and times.
//
// newDB prepares one fresh, empty database for a subtest and returns a
// function that opens a new Store over it; each call is a new instance, as
// another process would have. Stores that implement io.Closer are closed
// when the test closes them for a restart, and otherwise left to the
// caller's cleanup (closing twice must be harmless).
//
//	storetest.RunDurable(t, func(t *testing.T) func(t *testing.T) scheduler.Store {
//		path := filepath.Join(t.TempDir(), "db")
//		return func(t *testing.T) scheduler.Store { return open(t, path) }
//	})
func RunDurable(t *testing.T, newDB func(t *testing.T) func(t *testing.T) scheduler.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, open func(t *testing.T) scheduler.Store)
	}{
		{"RestartPersistence", testRestart},
		{"DefinitionRoundTrip", testRoundTrip},
		{"LeaseTakeoverBetweenInstances", testTakeover},
		{"ConcurrentInstancesClaimEachOccurrenceOnce", testInstancesClaimOnce},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.fn(t, newDB(t))
		})
	}
}

func closeStore(t *testing.T, s scheduler.Store) {
	t.Helper()
	if c, ok := s.(io.Closer); ok {
		if err := c.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
}

// richJob returns a definition that uses most of the job object, with
// times in a zone other than UTC.
func richJob() *scheduler.Job {
	zone := time.FixedZone("UTC+2", 2*3600)
	start := time.Date(2030, 3, 4, 5, 6, 7, 123456789, zone)
	end := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	count := 3
	return &scheduler.Job{
		StartTime: &start,
		Action: action.Action{
			Type: action.HTTPS,
			Request: &action.HTTPRequest{URI: "https://example.com/hook?q=ü", Method: "POST",
				Headers:        map[string]string{"Content-Type": "application/json", "X-Trace": "a\"b"},
				Body:           "{\"hello\": \"wörld\"}\n<xml/> & \u2028",
				Authentication: &action.Authentication{Type: action.AuthBasic, Username: "u", Password: "p"}},
			RetryPolicy: &retry.Policy{Type: retry.Fixed, Interval: retry.Duration(90 * time.Second), Count: &count},
			ErrorAction: &action.Action{Type: action.StorageQueue, QueueMessage: &action.StorageQueueMessage{
				StorageAccount: "acct", QueueName: "q", SASToken: "?sv=1&sig=x", Message: "failed"}},
		},
		Recurrence: &recurrence.Recurrence{Frequency: recurrence.Week, Interval: 2, EndTime: &end, TimeZone: "Europe/Berlin",
			Schedule: &recurrence.Schedule{Minutes: []int{0, 30}, Hours: []int{9, 17}, WeekDays: []recurrence.Weekday{recurrence.Monday, recurrence.Friday}}},
	}
}

// snapshot is everything a store holds, as read through the interface.
type snapshot struct {
	Collections []*scheduler.CollectionRecord
	Jobs        map[string][]*scheduler.JobRecord
	History     map[string][]scheduler.HistoryEntry
	NextDue     time.Time
}

func takeSnapshot(t *testing.T, s scheduler.Store) snapshot {
	t.Helper()
	snap := snapshot{Jobs: map[string][]*scheduler.JobRecord{}, History: map[string][]scheduler.HistoryEntry{}}
	var err error
	if snap.Collections, err = s.ListCollections(ctx); err != nil {
		t.Fatalf("ListCollections: %v", err)
	}
	for _, c := range snap.Collections {
		jobs, err := s.ListJobs(ctx, c.Name, scheduler.JobFilter{})
		if err != nil {
			t.Fatalf("ListJobs(%s): %v", c.Name, err)
		}
		snap.Jobs[c.Name] = jobs
		for _, j := range jobs {
			h, err := s.ListHistory(ctx, c.Name, j.Name, scheduler.HistoryFilter{})
			if err != nil {
				t.Fatalf("ListHistory(%s): %v", j.ID(), err)
			}
			snap.History[j.ID()] = h
		}
	}
	if snap.NextDue, err = s.NextDue(ctx); err != nil {
		t.Fatalf("NextDue: %v", err)
	}
	return snap
}

func testRestart(t *testing.T, open func(t *testing.T) scheduler.Store) {
	s := open(t)
	zone := time.FixedZone("X", -7*3600)
	coll := &scheduler.CollectionRecord{Name: "c", ETag: "ce", Created: t0.In(zone), Updated: t0.Add(time.Nanosecond),
		Definition: scheduler.JobCollection{Location: "west", Tags: map[string]string{"team": "ops", "ü": "ß"},
			Properties: scheduler.CollectionProperties{SKU: &scheduler.SKU{Name: scheduler.SKUP20Premium},
				Quota: &scheduler.Quota{MaxJobCount: 10, MaxJobOccurrence: 7, MaxRecurrence: &scheduler.MaxRecurrence{Frequency: recurrence.Minute, Interval: 5}}}}}
	if err := s.PutCollection(ctx, coll); err != nil {
		t.Fatal(err)
	}
	off := &scheduler.CollectionRecord{Name: "off", Created: t0, Updated: t0,
		Definition: scheduler.JobCollection{Properties: scheduler.CollectionProperties{State: scheduler.CollectionSuspended}}}
	if err := s.PutCollection(ctx, off); err != nil {
		t.Fatal(err)
	}
	last, next := t0.Add(-time.Minute+3*time.Nanosecond).In(zone), t0.Add(time.Hour).In(zone)
	rich := newJob("c", "rich", t0.Add(time.Second+5*time.Nanosecond).In(zone))
	rich.Job = richJob()
	rich.Created, rich.Updated = t0.In(zone), t0.Add(17*time.Microsecond+1)
	rich.Status = scheduler.JobStatus{LastExecutionTime: &last, NextExecutionTime: &next, ExecutionCount: 12, FailureCount: 3, FaultedCount: 1}
	rich.Schedule = scheduler.JobSchedule{DueAt: t0.Add(time.Second + 5*time.Nanosecond).In(zone), Anchor: t0.Add(-time.Hour), NextOccurrence: next,
		Occurrences: 9, Counted: 8, LastFailed: true, LastCancelled: true, RunRequested: t0.Add(3 * time.Nanosecond),
		Current: &scheduler.Occurrence{Number: 9, Expected: t0.Add(-time.Minute).In(zone), Tag: "tag-9", Retry: 2, ErrorAction: true, At: t0.Add(time.Second)},
		Waiting: &scheduler.Occurrence{Number: 10, Expected: t0, Tag: "tag-10", Manual: true},
		Policy: &scheduler.PolicyState{Ended: 6, Running: []scheduler.Run{
			{Occurrence: scheduler.Occurrence{Number: 7, Expected: t0.Add(-3 * time.Minute).In(zone), Tag: "tag-7", At: t0.Add(-time.Minute)}, Owner: "owner-2", Until: t0.Add(time.Minute + 7).In(zone)},
			{Occurrence: scheduler.Occurrence{Number: 8, Expected: t0.Add(-2 * time.Minute), Tag: "tag-8", Retry: 1, At: t0.Add(time.Minute)}, Dropped: true},
		}}}
	if err := s.PutJob(ctx, rich); err != nil {
		t.Fatal(err)
	}
	for _, j := range []*scheduler.JobRecord{
		newJob("c", "leased", t0),
		newJob("c", "done", time.Time{}),
		newJob("c", "idle", time.Time{}),
		newJob("off", "sleeping", t0),
	} {
		if j.Name == "done" {
			j.State = scheduler.JobCompleted
		}
		if j.Name == "idle" {
			j.State = scheduler.JobDisabled
		}
		if err := s.PutJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	// History on "done" through a claim and a record, then a lease on
	// "leased" that is still held at the restart.
	d, _ := s.GetJob(ctx, "c", "done")
	d.Schedule.DueAt = t0.Add(-time.Hour)
	if err := s.PutJob(ctx, d); err != nil {
		t.Fatal(err)
	}
	claimed, err := s.ClaimDue(ctx, t0.Add(-time.Hour), "owner-1", t0.Add(time.Hour), 1)
	if err != nil || len(claimed) != 1 || claimed[0].Name != "done" {
		t.Fatalf("ClaimDue = %v, %v; want c/done", names(claimed), err)
	}
	dj := claimed[0]
	dj.Schedule.DueAt = time.Time{}
	var hist []scheduler.HistoryEntry
	for i := 1; i <= 3; i++ {
		h := entry(i, scheduler.StatusFailed, t0.Add(time.Duration(i)*time.Minute+time.Duration(i)).In(zone))
		h.Job, h.ExecutionTag, h.RetryCount, h.ActionName = "done", fmt.Sprintf("tag-%d", i), i-1, scheduler.ErrorAction
		h.Message = "HTTP 500 Internal Server Error: \"oops\" \x00 ünïcode"
		hist = append(hist, h)
	}
	if err := s.Record(ctx, "owner-1", dj, hist); err != nil {
		t.Fatalf("Record: %v", err)
	}
	leased, err := s.ClaimDue(ctx, t0, "owner-1", t0.Add(10*time.Minute), 1)
	if err != nil || len(leased) != 1 || leased[0].Name != "leased" {
		t.Fatalf("ClaimDue = %v, %v; want c/leased", names(leased), err)
	}

	// What was written is what is read, times aside in UTC.
	gotRich, err := s.GetJob(ctx, "c", "rich")
	if err != nil {
		t.Fatal(err)
	}
	wantRich := rich.Clone()
	wantRich.Version, wantRich.Incarnation = 1, incarnation(t, s, "c", "rich")
	if diff := cmp.Diff(wantRich, gotRich); diff != "" {
		t.Errorf("GetJob after PutJob (-want +got):\n%s", diff)
	}
	gotHist, err := s.ListHistory(ctx, "c", "done", scheduler.HistoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	wantHist := []scheduler.HistoryEntry{hist[2], hist[1], hist[0]}
	if diff := cmp.Diff(wantHist, gotHist); diff != "" {
		t.Errorf("ListHistory after Record (-want +got):\n%s", diff)
	}
	gotColl, err := s.GetCollection(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	wantColl := coll.Clone()
	wantColl.Version = 1
	if diff := cmp.Diff(wantColl, gotColl); diff != "" {
		t.Errorf("GetCollection after PutCollection (-want +got):\n%s", diff)
	}

	before := takeSnapshot(t, s)
	closeStore(t, s)
	s = open(t)
	after := takeSnapshot(t, s)
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("store after a restart differs (-before +after):\n%s", diff)
	}
	for _, tm := range []time.Time{after.Jobs["c"][3].Created, after.Jobs["c"][3].Schedule.DueAt, after.History["c/done"][0].EndTime} {
		if tm.Location() != time.UTC {
			t.Errorf("time %v after a restart is not in UTC", tm)
		}
	}
	// The lease survived: nobody else can claim the job before it ends,
	// and its holder can record.
	if got, _ := s.ClaimDue(ctx, t0.Add(9*time.Minute), "owner-2", t0.Add(time.Hour), 10); !equal(names(got), []string{"c/rich"}) {
		t.Errorf("ClaimDue during a lease taken before the restart = %v, want only [c/rich] (not c/leased)", names(got))
	}
	if err := s.Record(ctx, "owner-1", leased[0], nil); err != nil {
		t.Errorf("Record by the lease holder after a restart: %v", err)
	}
	// Versions keep counting.
	r, _ := s.GetJob(ctx, "c", "rich")
	r.ETag = "after-restart"
	if err := s.PutJob(ctx, r); err != nil {
		t.Fatalf("PutJob after a restart: %v", err)
	}
	if got, _ := s.GetJob(ctx, "c", "rich"); got.Version != r.Version+1 {
		t.Errorf("version after a restart and a replace = %d, want %d", got.Version, r.Version+1)
	}
}

func testRoundTrip(t *testing.T, open func(t *testing.T) scheduler.Store) {
	s := open(t)
	putCollection(t, s, "c", 0)
	in := newJob("c", "j", t0)
	in.Job = richJob()
	custom := *in.Job
	custom.Action = action.Action{Type: "Custom", Custom: json.RawMessage(`{"n":1.5e300,"s":"x\u00e9","a":[null,true]}`)}
	in2 := newJob("c", "custom", time.Time{})
	in2.Job = &custom
	for _, j := range []*scheduler.JobRecord{in, in2} {
		if err := s.PutJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []*scheduler.JobRecord{in, in2} {
		for _, st := range []scheduler.Store{s, open(t)} {
			got, err := st.GetJob(ctx, "c", want.Name)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want.Job, got.Job); diff != "" {
				t.Errorf("definition of %s after a round trip (-want +got):\n%s", want.Name, diff)
			}
			wb, _ := json.Marshal(want.Job)
			gb, _ := json.Marshal(got.Job)
			if string(wb) != string(gb) {
				t.Errorf("JSON of %s after a round trip:\n%s\nwant\n%s", want.Name, gb, wb)
			}
		}
	}
}

func testTakeover(t *testing.T, open func(t *testing.T) scheduler.Store) {
	a, b := open(t), open(t)
	putCollection(t, a, "c", 0)
	putJob(t, a, "c", "j", t0)
	got, err := a.ClaimDue(ctx, t0, "a", t0.Add(time.Minute), 10)
	if err != nil || len(got) != 1 {
		t.Fatalf("ClaimDue(a) = %v, %v; want c/j", names(got), err)
	}
	if n, _ := b.NextDue(ctx); !n.Equal(t0.Add(time.Minute)) {
		t.Errorf("NextDue seen by another instance = %v, want the lease end %v", n, t0.Add(time.Minute))
	}
	if again, _ := b.ClaimDue(ctx, t0.Add(time.Minute-time.Nanosecond), "b", t0.Add(2*time.Minute), 10); len(again) != 0 {
		t.Errorf("ClaimDue(b) a nanosecond before the lease ends = %v, want nothing", names(again))
	}
	taken, err := b.ClaimDue(ctx, t0.Add(time.Minute), "b", t0.Add(2*time.Minute), 10)
	if err != nil || len(taken) != 1 || taken[0].LeaseOwner != "b" || taken[0].Version != got[0].Version+1 {
		t.Fatalf("ClaimDue(b) when the lease ends = %+v, %v; want c/j leased to b with version %d", taken, err, got[0].Version+1)
	}
	h := entry(1, scheduler.StatusCompleted, t0)
	wantErr(t, "Record by the instance whose lease was taken", a.Record(ctx, "a", got[0], []scheduler.HistoryEntry{h}), scheduler.ErrLeaseLost)
	wantErr(t, "ExtendLease by the instance whose lease was taken", a.ExtendLease(ctx, "c", "j", "a", t0.Add(time.Hour)), scheduler.ErrLeaseLost)
	if err := b.ExtendLease(ctx, "c", "j", "b", t0.Add(3*time.Minute)); err != nil {
		t.Fatalf("ExtendLease(b): %v", err)
	}
	if again, _ := a.ClaimDue(ctx, t0.Add(2*time.Minute), "a", t0.Add(4*time.Minute), 10); len(again) != 0 {
		t.Errorf("ClaimDue(a) during b's extended lease = %v, want nothing", names(again))
	}
	taken[0].Schedule.DueAt = time.Time{}
	h.Message = "by b"
	if err := b.Record(ctx, "b", taken[0], []scheduler.HistoryEntry{h}); err != nil {
		t.Fatalf("Record(b): %v", err)
	}
	hist, _ := a.ListHistory(ctx, "c", "j", scheduler.HistoryFilter{})
	if !equal(messages(hist), []string{"by b"}) {
		t.Errorf("history = %v, want only b's entry", messages(hist))
	}
	final, _ := a.GetJob(ctx, "c", "j")
	if final.LeaseOwner != "" || final.Version != taken[0].Version+1 {
		t.Errorf("after b's record: owner %q version %d; want none and %d", final.LeaseOwner, final.Version, taken[0].Version+1)
	}
}

// testInstancesClaimOnce runs claim-and-record loops in several instances
// at once over jobs that each have several occurrences, and checks that
// every occurrence ran exactly once and each job's history is complete
// and in order.
func testInstancesClaimOnce(t *testing.T, open func(t *testing.T) scheduler.Store) {
	const (
		instances   = 3
		workers     = 3 // goroutines per instance
		jobs        = 60
		occurrences = 4
	)
	stores := make([]scheduler.Store, instances)
	for i := range stores {
		stores[i] = open(t)
	}
	putCollection(t, stores[0], "c", jobs)
	for i := range jobs {
		putJob(t, stores[0], "c", fmt.Sprintf("j%03d", i), t0.Add(time.Duration(i%7)*time.Millisecond))
	}
	now := t0.Add(time.Hour)
	var mu sync.Mutex
	ran := make(map[string]string) // job@due -> owner
	var wg sync.WaitGroup
	for i, s := range stores {
		for w := range workers {
			owner := fmt.Sprintf("i%d-w%d", i, w)
			wg.Go(func() {
				for idle := 0; idle < 3; {
					got, err := s.ClaimDue(ctx, now, owner, now.Add(time.Hour), 4)
					if err != nil {
						t.Errorf("ClaimDue(%s): %v", owner, err)
						return
					}
					if len(got) == 0 {
						idle++
						time.Sleep(time.Millisecond)
						continue
					}
					idle = 0
					for _, j := range got {
						key := j.Name + "@" + j.Schedule.DueAt.Format(time.RFC3339Nano)
						mu.Lock()
						if prev, dup := ran[key]; dup {
							t.Errorf("occurrence %s claimed by %s and %s", key, prev, owner)
						}
						ran[key] = owner
						mu.Unlock()
						n := j.Schedule.Occurrences + 1
						h := entry(n, scheduler.StatusCompleted, j.Schedule.DueAt)
						h.Job, h.Message = j.Name, fmt.Sprint(n)
						j.Schedule.Occurrences = n
						j.Status.ExecutionCount++
						if n < occurrences {
							j.Schedule.DueAt = j.Schedule.DueAt.Add(time.Second)
						} else {
							j.Schedule.DueAt = time.Time{}
						}
						if err := s.Record(ctx, owner, j, []scheduler.HistoryEntry{h}); err != nil {
							t.Errorf("Record(%s by %s): %v", j.Name, owner, err)
						}
					}
				}
			})
		}
	}
	wg.Wait()
	if len(ran) != jobs*occurrences {
		t.Errorf("%d occurrences ran, want %d", len(ran), jobs*occurrences)
	}
	want := []string{"4", "3", "2", "1"}
	for i := range jobs {
		name := fmt.Sprintf("j%03d", i)
		h, err := stores[1].ListHistory(ctx, "c", name, scheduler.HistoryFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if !equal(messages(h), want) {
			t.Errorf("history of %s = %v, want %v", name, messages(h), want)
		}
		j, _ := stores[2].GetJob(ctx, "c", name)
		if j.Status.ExecutionCount != occurrences || j.LeaseOwner != "" {
			t.Errorf("%s: executionCount %d, lease %q; want %d and none", name, j.Status.ExecutionCount, j.LeaseOwner, occurrences)
		}
	}
	if n, _ := stores[0].NextDue(ctx); !n.IsZero() {
		t.Errorf("NextDue after every occurrence ran = %v, want zero", n)
	}
}
