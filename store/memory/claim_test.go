package memory

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
)

// TestRecordClaimedCopy covers Record of the copy that ClaimDue returned,
// and what happens when that copy is stale.
func TestRecordClaimedCopy(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	newStore := func(t *testing.T) *Store {
		return storeWith(t, &scheduler.JobRecord{Collection: "c", Name: "j", Job: &scheduler.Job{}, State: scheduler.JobEnabled,
			Schedule: scheduler.JobSchedule{DueAt: now}})
	}
	claim := func(t *testing.T, s *Store) *scheduler.JobRecord { return claimOne(t, s, now) }
	done := func(r *scheduler.JobRecord) *scheduler.JobRecord { r.Schedule.DueAt = time.Time{}; return r }

	t.Run("recorded through the copy, then by name", func(t *testing.T) {
		s := newStore(t)
		c := claim(t, s)
		incarnation := c.Incarnation
		if errs := s.RecordBatch(ctx, "me", []scheduler.RecordRequest{{Job: done(c)}}); errs != nil {
			t.Fatalf("RecordBatch: %v", errs)
		}
		// The copy is no longer a claim: a second record is checked by
		// name, and its version is stale now.
		again := &scheduler.JobRecord{Collection: "c", Name: "j", Job: &scheduler.Job{}, Version: 2, Incarnation: incarnation}
		if err := s.Record(ctx, "me", again, nil); !errors.Is(err, scheduler.ErrLeaseLost) {
			t.Errorf("second Record: %v, want ErrLeaseLost", err)
		}
	})
	t.Run("job deleted and created again", func(t *testing.T) {
		s := newStore(t)
		c := claim(t, s)
		if err := s.DeleteJob(ctx, "c", "j", ""); err != nil {
			t.Fatal(err)
		}
		if err := s.PutJob(ctx, &scheduler.JobRecord{Collection: "c", Name: "j", Job: &scheduler.Job{}}); err != nil {
			t.Fatal(err)
		}
		c.Version = 0 // as the new job's, so only its Incarnation tells it from the new one
		err := s.Record(ctx, "me", done(c), nil)
		if !errors.Is(err, scheduler.ErrNotFound) {
			t.Errorf("Record of a claim on a deleted job: %v, want ErrNotFound, the new job being another", err)
		}
		var re *scheduler.RecreatedError
		if now := s.colls["c"].jobs["j"].incarnation(); !errors.As(err, &re) || re.Incarnation != now || re.ClaimedIncarnation != c.Incarnation {
			t.Errorf("Record of a claim on a deleted job: %#v, want a RecreatedError of incarnations %d (stored) and %d (claimed)", err, now, c.Incarnation)
		}
	})
	t.Run("collection deleted", func(t *testing.T) {
		s := newStore(t)
		c := claim(t, s)
		if err := s.DeleteCollection(ctx, "c", ""); err != nil {
			t.Fatal(err)
		}
		if err := s.Record(ctx, "me", done(c), nil); !errors.Is(err, scheduler.ErrNotFound) {
			t.Errorf("Record of a claim in a deleted collection: %v, want ErrNotFound", err)
		}
	})
	t.Run("a copy from GetJob is found by name", func(t *testing.T) {
		s := newStore(t)
		claim(t, s)
		g, err := s.GetJob(ctx, "c", "j")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Record(ctx, "me", done(g), nil); err != nil {
			t.Errorf("Record of a GetJob copy: %v", err)
		}
	})
}

// storeWith returns a new store holding collection "c" and jobs.
func storeWith(t *testing.T, jobs ...*scheduler.JobRecord) *Store {
	t.Helper()
	ctx := context.Background()
	s := New()
	if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c"}); err != nil {
		t.Fatal(err)
	}
	for _, r := range jobs {
		if err := s.PutJob(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// claimOne claims one due job of s at at, failing t unless there is one.
func claimOne(t *testing.T, s *Store, at time.Time) *scheduler.JobRecord {
	t.Helper()
	got, err := s.ClaimDue(context.Background(), at, "me", at.Add(time.Minute), 1)
	if err != nil || len(got) != 1 {
		t.Fatalf("ClaimDue = %v, %v; want one job", got, err)
	}
	return got[0]
}

// TestClaimFillsSpareRecords checks that a record RecordBatch took over
// and did not keep is filled in by a later claim, as a copy the claimant
// owns: the same record as a new one would be, pointing to instants of its
// own.
func TestClaimFillsSpareRecords(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	job := func(name string, due time.Time) *scheduler.JobRecord {
		return &scheduler.JobRecord{Collection: "c", Name: name, State: scheduler.JobEnabled,
			Job:     &scheduler.Job{Action: action.Action{Type: "Custom", Custom: []byte(`{"a":1}`)}},
			Created: now, Updated: now, ETag: "00112233445566ff",
			Status:   scheduler.JobStatus{NextExecutionTime: new(due)},
			Schedule: scheduler.JobSchedule{Anchor: now, DueAt: due, NextOccurrence: due}}
	}
	other := job("second", now.Add(time.Second))
	other.ETag = "ffeeddccbbaa9988"
	s := storeWith(t, job("first", now), other)
	first := claimOne(t, s, now)
	etag := first.ETag // kept, as the Scheduler's timing cache keeps ETags
	// first ran and has no more occurrence: its record has a compact form.
	first.Schedule.DueAt, first.Schedule.NextOccurrence, first.Status.NextExecutionTime = time.Time{}, time.Time{}, nil
	first.State, first.Status.ExecutionCount, first.Status.LastExecutionTime = scheduler.JobCompleted, 1, new(now)
	if errs := s.RecordBatch(ctx, "me", []scheduler.RecordRequest{{Job: first}}); errs != nil {
		t.Fatal(errs)
	}
	if len(s.spare) != 1 || s.spare[0] != first {
		t.Fatalf("spare = %v, want the record RecordBatch took over", s.spare)
	}
	want, err := s.GetJob(ctx, "c", "second")
	if err != nil {
		t.Fatal(err)
	}
	second := claimOne(t, s, now.Add(time.Second))
	if second != first {
		t.Fatal("the claim did not fill in the spare record")
	}
	if second.Handle != s.colls["c"].jobs["second"] {
		t.Errorf("the claimed record's Handle is %v, want the stored job", second.Handle)
	}
	second.Handle = nil // compared above
	want.Version, want.LeaseOwner, want.LeaseUntil = second.Version, second.LeaseOwner, second.LeaseUntil
	if diff := cmp.Diff(want, second); diff != "" {
		t.Errorf("claimed record differs from GetJob's (-want +got):\n%s", diff)
	}
	if etag != "00112233445566ff" {
		t.Errorf("the ETag of the record RecordBatch took over changed to %q when a claim filled the record in", etag)
	}
	// The claimant owns it but for its definition, which the claim
	// shares: changing the rest changes nothing stored.
	*second.Status.NextExecutionTime = now.Add(time.Hour)
	again, err := s.GetJob(ctx, "c", "second")
	if err != nil {
		t.Fatal(err)
	}
	if !again.Status.NextExecutionTime.Equal(now.Add(time.Second)) {
		t.Errorf("changing the claimed record changed the store: %v", again.Status.NextExecutionTime)
	}
}

// TestClaimFilledRecordsShareExtras checks that the records a claim fills
// in from spare ones point to instants and ETags allocated extraChunk
// records at a time, without a last execution for jobs that have not run,
// and that a record RecordBatch then keeps whole gets
// instants and an ETag of its own, which keep no chunk.
func TestClaimFilledRecordsShareExtras(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	const n = extraChunk + extraChunk/2 // 2n within the default quota of 50 jobs
	var jobs []*scheduler.JobRecord
	for i := range 2 * n {
		jobs = append(jobs, &scheduler.JobRecord{Collection: "c", Name: fmt.Sprintf("j%03d", i), State: scheduler.JobEnabled,
			Job: &scheduler.Job{}, Created: now, Updated: now, ETag: fmt.Sprintf("%016x", i),
			Status:   scheduler.JobStatus{NextExecutionTime: new(now)},
			Schedule: scheduler.JobSchedule{Anchor: now, DueAt: now, NextOccurrence: now}})
	}
	s := storeWith(t, jobs...)
	claim := func() []*scheduler.JobRecord {
		t.Helper()
		got, err := s.ClaimDue(ctx, now, "me", now.Add(time.Minute), n)
		if err != nil || len(got) != n {
			t.Fatalf("ClaimDue = %d records, %v; want %d", len(got), err, n)
		}
		return got
	}
	// The first n complete: their records have a compact form, and go
	// to s.spare.
	var reqs []scheduler.RecordRequest
	for _, r := range claim() {
		r.Schedule.DueAt, r.Schedule.NextOccurrence, r.Status.NextExecutionTime = time.Time{}, time.Time{}, nil
		r.State, r.Status.ExecutionCount, r.Status.LastExecutionTime = scheduler.JobCompleted, 1, new(now)
		reqs = append(reqs, scheduler.RecordRequest{Job: r})
	}
	for i, err := range s.RecordBatch(ctx, "me", reqs) {
		if err != nil {
			t.Fatalf("RecordBatch[%d]: %v", i, err)
		}
	}
	if len(s.spare) != n {
		t.Fatalf("%d spare records, want %d", len(s.spare), n)
	}

	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got := claim()
	runtime.ReadMemStats(&after)
	// Per job its more part (the lease); per chunk the extras; the slice.
	if allocs, most := after.Mallocs-before.Mallocs, uint64(n+(n+extraChunk-1)/extraChunk+1); allocs > most {
		t.Errorf("claiming %d jobs into spare records: %d allocations, want at most %d", n, allocs, most)
	}
	// Per job 112 bytes of more part, 40 of extras (the jobs have not
	// run: no last execution) and 8 of the slice; and 128 bytes for what
	// else the claim may grow (an index).
	if bytes, most := after.TotalAlloc-before.TotalAlloc, uint64(n*(112+40+8)+128); bytes > most {
		t.Errorf("claiming %d jobs into spare records: %d bytes, want at most %d", n, bytes, most)
	}
	for i, r := range got {
		if want := fmt.Sprintf("%016x", n+i); r.ETag != want || !r.Status.NextExecutionTime.Equal(now) {
			t.Fatalf("claimed record %d: ETag %q, next execution %v; want %q, %v", i, r.ETag, r.Status.NextExecutionTime, want, now)
		}
	}

	// A failure ends the occurrence: a record without compact form, which
	// RecordBatch keeps whole.
	r := got[0]
	next, etag := r.Status.NextExecutionTime, unsafe.StringData(r.ETag)
	r.Schedule.Faults = 1
	if errs := s.RecordBatch(ctx, "me", []scheduler.RecordRequest{{Job: r}}); errs != nil {
		t.Fatal(errs)
	}
	w := s.colls["c"].jobs[r.Name].whole()
	if w != r {
		t.Fatal("RecordBatch did not keep the record whole")
	}
	if w.Status.NextExecutionTime == next || unsafe.StringData(w.ETag) == etag {
		t.Error("the record kept whole still points to the chunk of extras its claim filled in")
	}
	if !w.Status.NextExecutionTime.Equal(now) || w.ETag != fmt.Sprintf("%016x", n) {
		t.Errorf("the record kept whole: next execution %v, ETag %q; want %v, %q", w.Status.NextExecutionTime, w.ETag, now, fmt.Sprintf("%016x", n))
	}
}

// TestSpareCoversThePeak checks that the records RecordBatch takes over
// are all kept as spare ones when more were out on claims at once than
// the least bound of the spare: a later claim of as many fills them in
// rather than allocate new records.
func TestSpareCoversThePeak(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	const out = minSpare + minSpare/2 // at once, in each of two rounds
	s := New()
	c := &scheduler.CollectionRecord{Name: "c"}
	c.Definition.Properties.Quota = &scheduler.Quota{MaxJobCount: 2 * out}
	if err := s.PutCollection(ctx, c); err != nil {
		t.Fatal(err)
	}
	def := &scheduler.Job{}
	for i := range 2 * out {
		due := now.Add(time.Duration(i/out) * time.Second) // the second round a second later
		r := &scheduler.JobRecord{Collection: "c", Name: fmt.Sprintf("j%05d", i), State: scheduler.JobEnabled,
			Job: def, Created: now, Updated: now, ETag: fmt.Sprintf("%016x", i),
			Status:   scheduler.JobStatus{NextExecutionTime: new(due)},
			Schedule: scheduler.JobSchedule{Anchor: now, DueAt: due, NextOccurrence: due}}
		if err := s.PutJob(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	// round claims the jobs due at at, 256 at a time, and records them
	// all once every one is out.
	round := func(at time.Time) map[*scheduler.JobRecord]bool {
		t.Helper()
		got := map[*scheduler.JobRecord]bool{}
		var reqs []scheduler.RecordRequest
		for len(got) < out {
			claimed, err := s.ClaimDue(ctx, at, "me", at.Add(time.Minute), min(256, out-len(got)))
			if err != nil || len(claimed) == 0 {
				t.Fatalf("ClaimDue after %d of %d: %d records, %v", len(got), out, len(claimed), err)
			}
			for _, r := range claimed {
				got[r] = true
				r.Schedule.DueAt, r.Schedule.NextOccurrence, r.Status.NextExecutionTime = time.Time{}, time.Time{}, nil
				r.State, r.Status.ExecutionCount, r.Status.LastExecutionTime = scheduler.JobCompleted, 1, new(at)
				reqs = append(reqs, scheduler.RecordRequest{Job: r})
			}
		}
		if errs := s.RecordBatch(ctx, "me", reqs); errs != nil {
			t.Fatal(errs)
		}
		return got
	}
	first := round(now)
	if len(s.spare) != out {
		t.Errorf("%d spare records after %d were out at once and recorded, want %d", len(s.spare), out, out)
	}
	second := round(now.Add(time.Second))
	reused := 0
	for r := range second {
		if first[r] {
			reused++
		}
	}
	if reused != out {
		t.Errorf("the second round's claims filled in %d of the first round's %d records, want all", reused, out)
	}
}

// TestIncarnationWraps covers the store's Incarnation, its count of
// creates (48 bits of it), across the counts at which it wraps: a job
// created again under its name is told from its predecessor after 2^32
// creates of the store, and after 2^48 by its Created only, as
// JobRecord.Incarnation allows.
func TestIncarnationWraps(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2030, 1, 2, 3, 4, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		creates uint64        // of other jobs, between the two creates of the job
		later   time.Duration // from the first create's Created to the second's
		told    bool          // whether Record tells the second job from the first
	}{
		{"2^32 creates apart, one instant", 1 << 32, 0, true},
		{"2^48 creates apart, another instant", 1 << 48, time.Nanosecond, true},
		{"2^48 creates apart, one instant", 1 << 48, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New()
			if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c", ETag: "e1", Created: t0, Updated: t0}); err != nil {
				t.Fatal(err)
			}
			job := func(created time.Time) *scheduler.JobRecord {
				return &scheduler.JobRecord{Collection: "c", Name: "j", State: scheduler.JobEnabled, ETag: "j1",
					Job:     &scheduler.Job{Action: action.Action{Type: action.HTTP, Request: &action.HTTPRequest{URI: "http://127.0.0.1/", Method: "GET"}}},
					Created: created, Updated: created, Schedule: scheduler.JobSchedule{DueAt: t0, Anchor: created, NextOccurrence: t0}}
			}
			s.seq = 1<<32 - 2 // the store has created 2^32-2 jobs so far
			if err := s.PutJob(ctx, job(t0)); err != nil {
				t.Fatal(err)
			}
			old := claimOne(t, s, t0)
			if err := s.DeleteJob(ctx, "c", "j", ""); err != nil {
				t.Fatal(err)
			}
			s.seq = (s.seq + tc.creates - 1) & (1<<48 - 1) // as after that many creates of other jobs
			if err := s.PutJob(ctx, job(t0.Add(tc.later))); err != nil {
				t.Fatal(err)
			}
			fresh := claimOne(t, s, t0)
			if same := fresh.Incarnation == old.Incarnation; same == (tc.creates < 1<<48) {
				t.Errorf("Incarnations %d and %d, %d creates apart", old.Incarnation, fresh.Incarnation, tc.creates)
			}
			old.ETag = "from-the-first-claim"
			err := s.Record(ctx, "me", old, nil)
			if tc.told && !errors.Is(err, scheduler.ErrNotFound) || !tc.told && err != nil {
				t.Errorf("Record of the first job's claim over the second = %v, want ErrNotFound: %t", err, tc.told)
			}
		})
	}
}
