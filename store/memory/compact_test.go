package memory

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
)

// want returns what GetJob must return for a job put as r: r with its
// times in UTC without monotonic readings, the given version and lease.
func want(r *scheduler.JobRecord, version int64, owner string, until time.Time) *scheduler.JobRecord {
	w := r.Clone()
	normalize(w)
	w.Version, w.LeaseOwner, w.LeaseUntil, w.PreviousLeaseOwner, w.Handle = version, owner, until, "", nil
	return w
}

// drawn returns w with the Incarnation that s drew for its job, which
// must exist.
func drawn(s *Store, w *scheduler.JobRecord) *scheduler.JobRecord {
	w.Incarnation = s.colls[w.Collection].jobs[w.Name].incarnation()
	return w
}

// freshRecord returns a record shaped as the Scheduler writes a new job:
// the shape the compact form holds.
func freshRecord(name string, now, next time.Time) *scheduler.JobRecord {
	n := next
	return &scheduler.JobRecord{Collection: "c", Name: name, Job: &scheduler.Job{}, State: scheduler.JobEnabled,
		Status: scheduler.JobStatus{NextExecutionTime: &n}, ETag: "0123456789abcdef", Created: now, Updated: now,
		Schedule: scheduler.JobSchedule{DueAt: next, Anchor: now.Truncate(time.Second), NextOccurrence: next}}
}

// TestFreshJobTakesNoMore checks that a job as the Scheduler creates it
// (anchored at the whole second before its creation) is kept in compact
// form without a ran part: about fifty bytes besides the job.
func TestFreshJobTakesNoMore(t *testing.T) {
	ctx := context.Background()
	s := New()
	if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c"}); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)
	for i, anchor := range []time.Time{now, now.Truncate(time.Second)} {
		name := fmt.Sprint("j", i)
		r := freshRecord(name, now, now.Add(time.Minute))
		r.Schedule.Anchor = anchor
		if err := s.PutJob(ctx, r); err != nil {
			t.Fatal(err)
		}
		if m := s.colls["c"].jobs[name].more; m != nil {
			t.Errorf("anchor %v, created %v: the job keeps more (%+v), want nothing more", anchor, now, m)
		}
		got, err := s.GetJob(ctx, "c", name)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Schedule.Anchor.Equal(anchor) || !got.Created.Equal(now) || !got.Updated.Equal(now) {
			t.Errorf("GetJob: anchor %v, created %v, updated %v, want %v, %v, %v", got.Schedule.Anchor, got.Created, got.Updated, anchor, now, now)
		}
	}
}

// TestCompactForm puts records of many shapes, some with a compact form and
// some without, and checks that each reads back exactly as put, and that
// the compact form is used exactly where it can hold the record.
func TestCompactForm(t *testing.T) {
	ctx := context.Background()
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().In(berlin) // with a monotonic reading and a zone
	next := now.Add(90 * time.Minute).In(time.FixedZone("x", 3600))
	far, early := time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC)
	// Counts just past the int32 range where an int holds them; where an
	// int has 32 bits (narrow), the range's bounds, which the compact form
	// holds.
	past32, below32, narrow := min(math.MaxInt32+1, math.MaxInt), max(math.MinInt32-1, math.MinInt), strconv.IntSize == 32
	cases := []struct {
		name    string
		change  func(r *scheduler.JobRecord)
		compact bool
	}{
		{"fresh", func(r *scheduler.JobRecord) {}, true},
		{"ETag of another writer", func(r *scheduler.JobRecord) { r.ETag = `W/"x"` }, false},
		{"ETag in upper case", func(r *scheduler.JobRecord) { r.ETag = "0123456789ABCDEF" }, false},
		{"ETag too short", func(r *scheduler.JobRecord) { r.ETag = "0123456789abcde" }, false},
		{"fresh, last failed", func(r *scheduler.JobRecord) { r.Schedule.LastFailed = true }, true},
		{"disabled", func(r *scheduler.JobRecord) {
			r.State, r.Schedule.DueAt, r.Status.NextExecutionTime = scheduler.JobDisabled, time.Time{}, nil
		}, true},
		{"completed", func(r *scheduler.JobRecord) {
			r.State, r.Schedule.DueAt, r.Schedule.NextOccurrence, r.Status.NextExecutionTime = scheduler.JobCompleted, time.Time{}, time.Time{}, nil
		}, true},
		{"no state", func(r *scheduler.JobRecord) { r.State = "" }, true},
		{"all times zero", func(r *scheduler.JobRecord) {
			z := time.Time{}
			r.Created, r.Updated, r.Schedule = z, z, scheduler.JobSchedule{}
			r.Status.NextExecutionTime = &z
		}, true},
		{"same instants, other zones", func(r *scheduler.JobRecord) {
			r.Created, r.Schedule.Anchor = now.UTC(), now.In(time.FixedZone("y", -7200))
			n := next.UTC()
			r.Status.NextExecutionTime, r.Schedule.DueAt = &n, next.In(berlin)
		}, true},
		{"unknown state", func(r *scheduler.JobRecord) { r.State = "Sleeping" }, false},
		{"due earlier", func(r *scheduler.JobRecord) { r.Schedule.DueAt = now }, false},
		{"next execution other", func(r *scheduler.JobRecord) { n := now; r.Status.NextExecutionTime = &n }, false},
		{"created earlier", func(r *scheduler.JobRecord) { r.Created = now.Add(-time.Hour) }, true},
		{"anchor earlier", func(r *scheduler.JobRecord) { r.Schedule.Anchor = now.Add(-time.Hour) }, true},
		{"anchor at creation", func(r *scheduler.JobRecord) { r.Schedule.Anchor = now }, true},
		{"anchor at the whole second", func(r *scheduler.JobRecord) {
			r.Created, r.Updated = now.Truncate(time.Second).Add(999_999_999), now.Truncate(time.Second).Add(999_999_999)
		}, true},
		{"anchor a second earlier", func(r *scheduler.JobRecord) { r.Schedule.Anchor = now.Truncate(time.Second).Add(-time.Second) }, true},
		{"ran", func(r *scheduler.JobRecord) { l := now; r.Status.LastExecutionTime = &l }, true},
		{"executions", func(r *scheduler.JobRecord) { r.Status.ExecutionCount = 3 }, true},
		{"failures", func(r *scheduler.JobRecord) { r.Status.FailureCount = 1 }, true},
		{"faults", func(r *scheduler.JobRecord) { r.Status.FaultedCount = 1 }, true},
		{"occurrences", func(r *scheduler.JobRecord) { r.Schedule.Occurrences = 2 }, true},
		{"counted", func(r *scheduler.JobRecord) { r.Schedule.Counted = 2 }, true},
		{"current", func(r *scheduler.JobRecord) {
			r.Schedule.Current = &scheduler.Occurrence{Number: 1, Expected: now, Tag: "t", At: next}
		}, false},
		{"waiting", func(r *scheduler.JobRecord) { r.Schedule.Waiting = &scheduler.Occurrence{Expected: next} }, false},
		{"run requested", func(r *scheduler.JobRecord) { r.Schedule.RunRequested = now }, false},
		{"run trace", func(r *scheduler.JobRecord) { r.Schedule.RunTrace, r.Schedule.RunTraceState = "tp", "ts" }, false},
		{"run requested in an attempt", func(r *scheduler.JobRecord) { r.Schedule.RunRequestedInClaim = 3 }, false},
		{"last failed", func(r *scheduler.JobRecord) { r.Schedule.LastFailed = true }, true},
		{"last cancelled", func(r *scheduler.JobRecord) { r.Schedule.LastFailed, r.Schedule.LastCancelled = true, true }, false},
		{"far future", func(r *scheduler.JobRecord) {
			r.Created, r.Updated, r.Schedule.Anchor = far, far, far
		}, false},
		{"ran, all at once", func(r *scheduler.JobRecord) {
			l := now.Add(time.Minute)
			r.Created, r.Updated, r.Status.LastExecutionTime = now.Add(-time.Hour), now.Add(2*time.Minute), &l
			r.Status.ExecutionCount, r.Status.FailureCount, r.Status.FaultedCount = 7, 3, 1
			r.Schedule.Occurrences, r.Schedule.Counted, r.Schedule.LastFailed = 5, 4, true
		}, true},
		{"ran, last execution zero", func(r *scheduler.JobRecord) { l := time.Time{}; r.Status.LastExecutionTime = &l }, false},
		{"executions beyond 32 bits", func(r *scheduler.JobRecord) { r.Status.ExecutionCount = past32 }, narrow},
		{"failures at the 32-bit bound", func(r *scheduler.JobRecord) { r.Status.FailureCount = math.MaxInt32 }, true},
		{"faults beyond 32 bits", func(r *scheduler.JobRecord) { r.Status.FaultedCount = past32 }, narrow},
		{"occurrences beyond 32 bits", func(r *scheduler.JobRecord) { r.Schedule.Occurrences = past32 }, narrow},
		{"counted below 32 bits", func(r *scheduler.JobRecord) { r.Schedule.Counted = below32 }, narrow},
		{"ran, created far in the past", func(r *scheduler.JobRecord) { r.Created = early }, false},
		{"ran, last execution far ahead", func(r *scheduler.JobRecord) { l := far; r.Status.LastExecutionTime = &l }, false},
		{"far past", func(r *scheduler.JobRecord) {
			n := early
			r.Schedule.NextOccurrence, r.Schedule.DueAt, r.Status.NextExecutionTime = early, early, &n
		}, false},
	}
	s := New()
	if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c"}); err != nil {
		t.Fatal(err)
	}
	counts := map[scheduler.JobState]int{}
	for _, tc := range cases {
		r := freshRecord(tc.name, now, next)
		tc.change(r)
		w := want(r, 1, "", time.Time{})
		counts[w.State]++
		if err := s.PutJob(ctx, r); err != nil {
			t.Fatalf("%s: PutJob: %v", tc.name, err)
		}
		if e := s.colls["c"].jobs[tc.name]; (e.whole() == nil) != tc.compact {
			t.Errorf("%s: compact form %v, want %v", tc.name, e.whole() == nil, tc.compact)
		}
		// The store keeps its own copy: changing the caller's record
		// changes nothing stored.
		r.Created, r.Schedule.NextOccurrence = r.Created.Add(time.Second), r.Schedule.NextOccurrence.Add(time.Second)
		if p := r.Status.NextExecutionTime; p != nil {
			*p = p.Add(time.Second)
		}
		got, err := s.GetJob(ctx, "c", tc.name)
		if err != nil {
			t.Fatalf("%s: GetJob: %v", tc.name, err)
		}
		if !reflect.DeepEqual(got, drawn(s, w)) {
			t.Errorf("%s: GetJob =\n%+v\nwant\n%+v", tc.name, got, w)
		}
		// What GetJob returns is the caller's.
		if p := got.Status.NextExecutionTime; p != nil {
			*p = p.Add(time.Hour)
		}
		got.Schedule.DueAt = got.Schedule.DueAt.Add(time.Hour)
		if again, _ := s.GetJob(ctx, "c", tc.name); !reflect.DeepEqual(again, w) {
			t.Errorf("%s: a change to what GetJob returned reached the store", tc.name)
		}
		if list, err := s.ListJobs(ctx, "c", scheduler.JobFilter{State: w.State}); err != nil || !containsEqual(list, w) {
			t.Errorf("%s: ListJobs by state %q does not hold the record (%v)", tc.name, w.State, err)
		}
	}
	// The counts by state, the unknown one included; then again after
	// the unknown state's job is gone.
	for round := range 2 {
		got, err := s.CountJobs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		m := map[scheduler.JobState]int{}
		for _, c := range got {
			m[c.State] = c.Jobs
		}
		if !reflect.DeepEqual(m, counts) || !slices.IsSortedFunc(got, func(a, b scheduler.JobCount) int { return strings.Compare(string(a.State), string(b.State)) }) {
			t.Errorf("CountJobs = %+v, want %v in order", got, counts)
		}
		if round == 0 {
			if err := s.DeleteJob(ctx, "c", "unknown state", ""); err != nil {
				t.Fatal(err)
			}
			delete(counts, "Sleeping")
		}
	}
}

func containsEqual(list []*scheduler.JobRecord, w *scheduler.JobRecord) bool {
	for _, r := range list {
		if reflect.DeepEqual(r, w) {
			return true
		}
	}
	return false
}

// TestCompactLifecycle follows a job from the compact form through a claim
// (which keeps it), a lease extension, a recorded outcome that has no
// compact form (a retry pending), one that has, and a replace, checking
// every read.
func TestCompactLifecycle(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2030, 1, 2, 3, 4, 5, 6, time.UTC)
	s := New()
	if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c"}); err != nil {
		t.Fatal(err)
	}
	put := freshRecord("j", now.Add(-time.Hour), now)
	if err := s.PutJob(ctx, put); err != nil {
		t.Fatal(err)
	}
	e := s.colls["c"].jobs["j"]
	check := func(step string, w *scheduler.JobRecord, compact bool) {
		t.Helper()
		got, err := s.GetJob(ctx, "c", "j")
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if !reflect.DeepEqual(got, drawn(s, w)) {
			t.Errorf("%s: GetJob =\n%+v\nwant\n%+v", step, got, w)
		}
		if (e.whole() == nil) != compact {
			t.Errorf("%s: compact form %v, want %v", step, e.whole() == nil, compact)
		}
	}
	until := now.Add(time.Minute)
	claimed, err := s.ClaimDue(ctx, now, "me", until, 10)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("ClaimDue = %v, %v", claimed, err)
	}
	w := want(put, 2, "me", until)
	if h := claimed[0].Handle; h != s.colls["c"].jobs["j"] {
		t.Errorf("ClaimDue returned the Handle %v, want the stored job", h)
	}
	if w.Handle = claimed[0].Handle; !reflect.DeepEqual(claimed[0], drawn(s, w)) {
		t.Errorf("ClaimDue returned\n%+v\nwant\n%+v", claimed[0], w)
	}
	w.Handle = nil // GetJob returns none
	check("claimed", w, true)
	if n, _ := s.NextDue(ctx); !n.Equal(until) {
		t.Errorf("NextDue while leased = %v, want the lease end %v", n, until)
	}
	until = until.Add(time.Minute)
	if err := s.ExtendLease(ctx, "c", "j", "me", until); err != nil {
		t.Fatal(err)
	}
	check("extended", want(put, 2, "me", until), true)

	// An outcome the compact form cannot hold: a retry pending.
	ran := claimed[0]
	l := now.Add(time.Second)
	ran.Status.LastExecutionTime, ran.Status.ExecutionCount, ran.Status.FailureCount = &l, 1, 1
	retry := now.Add(30 * time.Second)
	ran.Updated, ran.Schedule.DueAt = l, retry
	ran.Schedule.Current = &scheduler.Occurrence{Number: 1, Expected: now, Retry: 1, At: retry, Tag: "t"}
	n := now.Add(time.Hour)
	ran.Schedule.NextOccurrence, ran.Status.NextExecutionTime = n, &n
	w = want(ran, 3, "", time.Time{})
	if err := s.Record(ctx, "me", ran, []scheduler.HistoryEntry{{Collection: "c", Job: "j", EndTime: l}}); err != nil {
		t.Fatal(err)
	}
	check("retry pending", w, false)
	if n, _ := s.NextDue(ctx); !n.Equal(retry) {
		t.Errorf("NextDue with the retry pending = %v, want %v", n, retry)
	}

	// The retry succeeds: an outcome the compact form holds.
	claimed, err = s.ClaimDue(ctx, retry, "me", retry.Add(time.Minute), 10)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("ClaimDue of the retry = %v, %v", claimed, err)
	}
	ran = claimed[0]
	l = retry.Add(time.Second)
	ran.Status.LastExecutionTime, ran.Status.ExecutionCount = &l, 2
	ran.Updated, ran.Schedule.DueAt, ran.Schedule.Current, ran.Schedule.Occurrences = l, n, nil, 1
	w = want(ran, 5, "", time.Time{})
	if errs := s.RecordBatch(ctx, "me", []scheduler.RecordRequest{{Job: ran}}); errs != nil {
		t.Fatal(errs)
	}
	check("recorded", w, true)
	if n, _ := s.NextDue(ctx); !n.Equal(now.Add(time.Hour)) {
		t.Errorf("NextDue after the outcome = %v, want %v", n, now.Add(time.Hour))
	}

	// A replace shaped as a new job goes back to the compact form, and
	// keeps the history.
	again := freshRecord("j", now.Add(2*time.Minute), now.Add(2*time.Hour))
	again.Version = 5
	if err := s.PutJob(ctx, again); err != nil {
		t.Fatal(err)
	}
	check("replaced", want(again, 6, "", time.Time{}), true)
	if h, err := s.ListHistory(ctx, "c", "j", scheduler.HistoryFilter{}); err != nil || len(h) != 1 {
		t.Errorf("ListHistory after the replace = %v, %v; want the one entry", h, err)
	}

	// A claim of a compact job whose outcome still has a compact form.
	claimed, err = s.ClaimDue(ctx, now.Add(3*time.Hour), "me", now.Add(4*time.Hour), 10)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("second ClaimDue = %v, %v", claimed, err)
	}
	out := claimed[0]
	out.State = scheduler.JobDisabled
	out.Schedule.DueAt, out.Status.NextExecutionTime = time.Time{}, nil
	if errs := s.RecordBatch(ctx, "me", []scheduler.RecordRequest{{Job: out}}); errs != nil {
		t.Fatal(errs)
	}
	w = want(again, 8, "", time.Time{})
	w.State, w.Schedule.DueAt, w.Status.NextExecutionTime = scheduler.JobDisabled, time.Time{}, nil
	check("recorded disabled", w, true)
	if n, _ := s.NextDue(ctx); !n.IsZero() {
		t.Errorf("NextDue with the only job disabled = %v, want none", n)
	}
	if counts, _ := s.CountJobs(ctx); len(counts) != 1 || counts[0].State != scheduler.JobDisabled || counts[0].Jobs != 1 {
		t.Errorf("CountJobs = %+v, want one disabled job", counts)
	}
}

// TestCompactRandom puts and records records of random shapes and checks
// each read against the record as put.
func TestCompactRandom(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(3, 4))
	base := time.Date(2030, 1, 2, 3, 4, 5, 6, time.UTC)
	times := []time.Time{{}, base, base.Add(time.Hour), base.Add(-time.Hour), time.Date(2500, 1, 1, 0, 0, 0, 0, time.UTC)}
	pick := func() time.Time { return times[r.IntN(len(times))] }
	pickPtr := func() *time.Time {
		if r.IntN(3) == 0 {
			return nil
		}
		t := pick()
		return &t
	}
	states := []scheduler.JobState{scheduler.JobEnabled, scheduler.JobDisabled, scheduler.JobCompleted, scheduler.JobFaulted, ""}
	s := New()
	if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c"}); err != nil {
		t.Fatal(err)
	}
	compact := 0
	for i := range 3000 {
		at := pick()
		rec := &scheduler.JobRecord{Collection: "c", Name: "j", Job: &scheduler.Job{}, State: states[r.IntN(len(states))],
			ETag: "0123456789abcdef", Created: at, Updated: at}
		if r.IntN(4) == 0 {
			rec.Created = pick()
		}
		rec.Schedule.Anchor, rec.Schedule.NextOccurrence = at, pick()
		if r.IntN(4) == 0 {
			rec.Schedule.Anchor = pick()
		}
		switch r.IntN(3) {
		case 0:
			rec.Schedule.DueAt = rec.Schedule.NextOccurrence
		case 1:
			rec.Schedule.DueAt = pick()
		}
		switch r.IntN(3) {
		case 0:
			n := rec.Schedule.NextOccurrence
			rec.Status.NextExecutionTime = &n
		case 1:
			rec.Status.NextExecutionTime = pickPtr()
		}
		if r.IntN(5) == 0 {
			rec.Status.LastExecutionTime = pickPtr()
		}
		if r.IntN(5) == 0 {
			rec.Schedule.Occurrences = 1
		}
		if r.IntN(5) == 0 {
			rec.Status.ExecutionCount, rec.Status.FaultedCount, rec.Schedule.LastFailed = 2, 1, true
		}
		if r.IntN(8) == 0 {
			rec.Schedule.Current = &scheduler.Occurrence{Number: 1, At: pick()}
		}
		old, err := s.GetJob(ctx, "c", "j")
		if err == nil {
			rec.Version = old.Version
		}
		w := want(rec, rec.Version+1, "", time.Time{})
		if err == nil && r.IntN(2) == 0 && !old.Schedule.DueAt.IsZero() {
			// Through a claim and a recorded outcome.
			claimed, err := s.ClaimDue(ctx, old.Schedule.DueAt.Add(time.Second), "me", old.Schedule.DueAt.Add(time.Minute), 1)
			if err != nil || len(claimed) != 1 {
				t.Fatalf("step %d: ClaimDue = %v, %v", i, claimed, err)
			}
			// A record keeps the job's Created and Incarnation: one
			// that differs is about a job deleted since.
			rec.Version, rec.Created, rec.Incarnation = claimed[0].Version, claimed[0].Created, claimed[0].Incarnation
			w = want(rec, rec.Version+1, "", time.Time{})
			if err := s.Record(ctx, "me", rec, nil); err != nil {
				t.Fatalf("step %d: Record: %v", i, err)
			}
		} else if err := s.PutJob(ctx, rec); err != nil {
			t.Fatalf("step %d: PutJob: %v", i, err)
		}
		got, err := s.GetJob(ctx, "c", "j")
		if err != nil || !reflect.DeepEqual(got, drawn(s, w)) {
			t.Fatalf("step %d: GetJob =\n%+v, %v\nwant\n%+v", i, got, err, w)
		}
		if s.colls["c"].jobs["j"].whole() == nil {
			compact++
		}
		next, _ := s.NextDue(ctx)
		// (NextDue answers in Unix nanoseconds: only for DueAts that
		// they can hold.)
		if due := w.Schedule.DueAt; due.Year() < 2262 && (due.IsZero() != next.IsZero() || !next.Equal(due)) {
			t.Fatalf("step %d: NextDue = %v, want the DueAt %v", i, next, w.Schedule.DueAt)
		}
	}
	if compact < 100 || compact > 2900 {
		t.Errorf("%d of 3000 records in compact form: the test mixes the forms too little", compact)
	}
}

// TestCompactHistory records history entries of every shape, some with a
// compact form and some without, and checks that ListHistory and
// RecentHistory return them exactly as recorded, filters included.
func TestCompactHistory(t *testing.T) {
	ctx := context.Background()
	now := time.Now().In(time.FixedZone("x", 5400)) // with a monotonic reading and a zone
	s := New()
	if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c"}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutJob(ctx, freshRecord("j", now, now)); err != nil {
		t.Fatal(err)
	}
	base := scheduler.HistoryEntry{Collection: "c", Job: "j", ActionName: scheduler.MainAction, Status: scheduler.StatusCompleted,
		ExpectedExecutionTime: now, StartTime: now.Add(time.Millisecond), EndTime: now.Add(time.Second),
		RetryCount: 2, RepeatCount: 7, Message: "Http 200 OK", ExecutionTag: "tag"}
	shapes := []struct {
		change  func(h *scheduler.HistoryEntry)
		compact bool
	}{
		{func(h *scheduler.HistoryEntry) {}, true},
		{func(h *scheduler.HistoryEntry) { h.Status, h.Faulted = scheduler.StatusFailed, true }, true},
		{func(h *scheduler.HistoryEntry) {
			h.ActionName, h.Status = scheduler.ErrorAction, scheduler.StatusPostponed
		}, true},
		{func(h *scheduler.HistoryEntry) { *h = scheduler.HistoryEntry{Collection: "c", Job: "j"} }, true},
		{func(h *scheduler.HistoryEntry) { h.Status = "Skipped" }, false},
		{func(h *scheduler.HistoryEntry) { h.ActionName = "Cleanup" }, false},
		{func(h *scheduler.HistoryEntry) { h.Collection = "other" }, false},
		{func(h *scheduler.HistoryEntry) { h.Job = "" }, false},
		{func(h *scheduler.HistoryEntry) { h.EndTime = time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC) }, false},
		{func(h *scheduler.HistoryEntry) { h.ExpectedExecutionTime = time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC) }, false},
	}
	var recorded []scheduler.HistoryEntry
	for i, sh := range shapes {
		h := base
		h.Message = fmt.Sprint(i)
		sh.change(&h)
		if sh.compact {
			h.Message = fmt.Sprint(i) // kept through the change
		}
		claimed, err := s.ClaimDue(ctx, now.Add(time.Hour), "me", now.Add(2*time.Hour), 1)
		if err != nil || len(claimed) != 1 {
			t.Fatalf("shape %d: ClaimDue = %v, %v", i, claimed, err)
		}
		if err := s.Record(ctx, "me", claimed[0], []scheduler.HistoryEntry{h}); err != nil {
			t.Fatalf("shape %d: Record: %v", i, err)
		}
		h.ExpectedExecutionTime, h.StartTime, h.EndTime = utc(h.ExpectedExecutionTime), utc(h.StartTime), utc(h.EndTime)
		recorded = append(recorded, h)
	}
	slices.Reverse(recorded)
	filters := []scheduler.HistoryFilter{{}, {Status: scheduler.StatusFailed}, {Faulted: true}, {Collections: []string{"other"}},
		{Collections: []string{"c"}, Skip: 1, Top: 3}, {Status: "Skipped"}}
	for _, f := range filters {
		var w []scheduler.HistoryEntry
		for _, h := range recorded {
			if f.Keeps(&h) {
				w = append(w, h)
			}
		}
		w = w[min(f.Skip, len(w)):]
		if f.Top > 0 {
			w = w[:min(f.Top, len(w))]
		}
		got, err := s.ListHistory(ctx, "c", "j", f)
		if err != nil || !reflect.DeepEqual(got, w) {
			t.Errorf("ListHistory(%+v) =\n%+v, %v\nwant\n%+v", f, got, err, w)
		}
		if f.Collections != nil && !slices.Contains(f.Collections, "c") {
			continue // RecentHistory goes by the job's collection
		}
		got, err = s.RecentHistory(ctx, f)
		if err != nil || !reflect.DeepEqual(got, w) {
			t.Errorf("RecentHistory(%+v) =\n%+v, %v\nwant\n%+v", f, got, err, w)
		}
	}
}

// TestCompactFormKeepsEveryField sets each field of a record's Status and
// Schedule in turn, whatever fields those types have, and checks that the
// record reads back as put: a field added to them later and not taught to
// the compact form fails here.
func TestCompactFormKeepsEveryField(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2030, 5, 6, 7, 8, 9, 10, time.UTC)
	next := now.Add(time.Hour)
	s := New()
	if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c"}); err != nil {
		t.Fatal(err)
	}
	// nonZero returns a value of type typ other than its zero value.
	nonZero := func(typ reflect.Type) reflect.Value {
		switch typ {
		case reflect.TypeFor[time.Time]():
			return reflect.ValueOf(now.Add(-time.Minute))
		case reflect.TypeFor[*time.Time]():
			v := now.Add(-2 * time.Minute)
			return reflect.ValueOf(&v)
		case reflect.TypeFor[*scheduler.Occurrence]():
			return reflect.ValueOf(&scheduler.Occurrence{Number: 2, Expected: now, Tag: "t"})
		case reflect.TypeFor[*scheduler.PolicyState]():
			return reflect.ValueOf(&scheduler.PolicyState{StateReason: "x", ResumeTime: now, Buffered: now.Add(-time.Minute), Backfill: []time.Time{now.Add(-3 * time.Minute)},
				Passed: &scheduler.HistoryEntry{Collection: "c", Job: "j", Status: scheduler.StatusSkipped, ExpectedExecutionTime: now, StartTime: now, EndTime: now, Skipped: 2}})
		}
		v := reflect.New(typ).Elem()
		switch typ.Kind() {
		case reflect.Bool:
			v.SetBool(true)
		case reflect.Int, reflect.Int64:
			v.SetInt(3)
		case reflect.String:
			v.SetString("x")
		default:
			t.Fatalf("no non-zero value for %v: teach this test and the compact form about it", typ)
		}
		return v
	}
	n := 0
	for _, part := range []string{"Status", "Schedule"} {
		typ := reflect.ValueOf(scheduler.JobRecord{}).FieldByName(part).Type()
		for i := range typ.NumField() {
			f := typ.Field(i)
			if !f.IsExported() {
				continue
			}
			name := fmt.Sprintf("%s.%s", part, f.Name)
			r := freshRecord(name, now, next)
			reflect.ValueOf(r).Elem().FieldByName(part).Field(i).Set(nonZero(f.Type))
			w := want(r, 1, "", time.Time{})
			if err := s.PutJob(ctx, r); err != nil {
				t.Fatalf("%s: PutJob: %v", name, err)
			}
			got, err := s.GetJob(ctx, "c", name)
			if err != nil {
				t.Fatalf("%s: GetJob: %v", name, err)
			}
			if !reflect.DeepEqual(got, drawn(s, w)) {
				t.Errorf("%s: GetJob =\n%+v\nwant\n%+v", name, got, w)
			}
			n++
		}
	}
	if n < 14 {
		t.Fatalf("only %d fields set", n)
	}
}
