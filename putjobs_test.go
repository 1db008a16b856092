package scheduler_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/recurrence"
	"github.com/jobclock/scheduler/store/memory"
)

// batchJob returns a valid job definition of the tests.
func batchJob(t *testing.T) *scheduler.Job {
	t.Helper()
	j, err := scheduler.ParseJob([]byte(jobJSON(time.Time{}, `"recurrence": {"frequency": "Hour"}`)), nil)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// wantItems checks that err is a *PutJobsError whose items are, in order,
// at the given indexes, each matching its target and, for a validation
// error, naming its path.
func wantItems(t *testing.T, what string, err error, want ...struct {
	index  int
	target error
	path   string
}) {
	t.Helper()
	var pe *scheduler.PutJobsError
	if !errors.As(err, &pe) {
		t.Fatalf("%s: error %v, want a *PutJobsError", what, err)
	}
	if len(pe.Items) != len(want) {
		t.Fatalf("%s: %d items (%v), want %d", what, len(pe.Items), err, len(want))
	}
	for i, w := range want {
		it := pe.Items[i]
		if it.Index != w.index || !errors.Is(it.Err, w.target) || !errors.Is(err, w.target) {
			t.Errorf("%s: item %d = jobs[%d] %v, want jobs[%d] matching %v", what, i, it.Index, it.Err, w.index, w.target)
		}
		if w.path != "" && !slices.ContainsFunc(scheduler.ValidationErrors(it.Err), func(v *scheduler.ValidationError) bool { return v.Path == w.path }) {
			t.Errorf("%s: jobs[%d] error %v does not name %q", what, it.Index, it.Err, w.path)
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("jobs[%d] %q: ", it.Index, it.Name)) {
			t.Errorf("%s: %q does not name jobs[%d] %q", what, err.Error(), it.Index, it.Name)
		}
	}
}

type item = struct {
	index  int
	target error
	path   string
}

func jobNamesOf(t *testing.T, s *scheduler.Scheduler, coll string) []string {
	t.Helper()
	list, err := s.ListJobs(context.Background(), coll, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range list {
		out = append(out, r.Name)
	}
	return out
}

func TestPutJobsValidation(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, scheduler.Config{})
	longURI := batchJob(t)
	longURI.Action.Request.URI = "http://127.0.0.1/" + strings.Repeat("x", 2100)
	badState := batchJob(t)
	badState.State = scheduler.JobFaulted
	batch := []scheduler.JobPut{
		{Name: "a", Job: batchJob(t)},
		{Name: "1bad", Job: batchJob(t)},
		{Name: "c", Job: longURI},
		{Name: "a", Job: batchJob(t)},
		{Name: "e", Job: nil},
		{Name: "f", Job: batchJob(t)},
		{Name: "g", Job: badState},
		{Name: "h", Job: batchJob(t), Tags: map[string]string{"": "x"}},
	}
	_, err := e.s.PutJobs(ctx, "c", batch, nil)
	wantItems(t, "PutJobs(bad jobs)", err,
		item{1, scheduler.ErrInvalid, "name"},
		item{2, scheduler.ErrInvalid, "action.request.uri"},
		item{3, scheduler.ErrInvalid, "name"},
		item{4, scheduler.ErrInvalid, "job"},
		item{6, scheduler.ErrInvalid, "state"},
		item{7, scheduler.ErrInvalid, `tags[""]`},
	)
	if !errors.Is(err, scheduler.ErrInvalid) {
		t.Errorf("PutJobs(bad jobs) = %v, want it to match ErrInvalid", err)
	}
	if !strings.Contains(err.Error(), `jobs[3] "a": name: "a" is the name of jobs[0] too`) {
		t.Errorf("PutJobs(bad jobs) = %q, want it to say that jobs[3] repeats the name of jobs[0]", err)
	}
	if got := jobNamesOf(t, e.s, "c"); len(got) != 0 {
		t.Errorf("after the refused batch: jobs %v, want none", got)
	}

	_, err = e.s.PutJobs(ctx, "bad name", []scheduler.JobPut{{Name: "a", Job: batchJob(t)}}, nil)
	wantValidation(t, "PutJobs(bad collection name)", err, "collection")
	_, err = e.s.PutJobs(ctx, "c", []scheduler.JobPut{{Name: "a", Job: batchJob(t)}}, &scheduler.PutJobOptions{IfMatch: `"etag"`})
	wantValidation(t, "PutJobs(IfMatch an ETag)", err, "IfMatch")
	_, err = e.s.PutJobs(ctx, "none", []scheduler.JobPut{{Name: "a", Job: batchJob(t)}}, nil)
	if !errors.Is(err, scheduler.ErrNotFound) {
		t.Errorf("PutJobs(missing collection) = %v, want ErrNotFound", err)
	}
	got, err := e.s.PutJobs(ctx, "c", nil, nil)
	if err != nil || got == nil || len(got) != 0 {
		t.Errorf("PutJobs(no jobs) = %v, %v; want an empty list", got, err)
	}
}

func TestPutJobs(t *testing.T) {
	for _, tt := range []struct {
		name  string
		store func() scheduler.Store
	}{
		{"bulk", func() scheduler.Store { return memory.New() }},
		{"one at a time", func() scheduler.Store { return plainStore{memory.New()} }},
	} {
		t.Run(tt.name, func(t *testing.T) { testPutJobs(t, tt.store(), tt.name == "bulk") })
	}
}

func testPutJobs(t *testing.T, st scheduler.Store, bulk bool) {
	ctx := context.Background()
	s, err := scheduler.New(st, &scheduler.Config{Logger: discard})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutCollection(ctx, "c", &scheduler.JobCollection{Properties: scheduler.CollectionProperties{
		Quota: &scheduler.Quota{MaxJobCount: 4}}}, nil); err != nil {
		t.Fatal(err)
	}
	old, err := s.PutJob(ctx, "c", "old", batchJob(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	counted := old.Clone()
	counted.Status.ExecutionCount = 3
	if err := st.PutJob(ctx, counted); err != nil {
		t.Fatal(err)
	}
	disabled := batchJob(t)
	disabled.State = scheduler.JobDisabled
	disabled.StateReason = "not yet"
	recs, err := s.PutJobs(ctx, "c", []scheduler.JobPut{{Name: "n1", Job: batchJob(t), Tags: map[string]string{"team": "ops"}}, {Name: "old", Job: batchJob(t), Tags: map[string]string{"team": "dev"}}, {Name: "n2", Job: disabled}}, nil)
	if err != nil {
		t.Fatalf("PutJobs: %v", err)
	}
	if len(recs) != 3 {
		t.Fatalf("PutJobs returned %d records, want 3", len(recs))
	}
	for i, want := range []struct {
		name    string
		version int64
		count   int
		state   scheduler.JobState
	}{{"n1", 1, 0, scheduler.JobEnabled}, {"old", 3, 3, scheduler.JobEnabled}, {"n2", 1, 0, scheduler.JobDisabled}} {
		r := recs[i]
		stored, err := s.GetJob(ctx, "c", want.name)
		if err != nil {
			t.Fatal(err)
		}
		if r.Name != want.name || r.Version != want.version || r.Status.ExecutionCount != want.count || r.State != want.state ||
			stored.Version != r.Version || stored.ETag != r.ETag || r.ETag == "" || r.ETag == old.ETag {
			t.Errorf("record %d = %s version %d count %d %s ETag %s (stored: version %d ETag %s); want %s version %d count %d %s with a new ETag",
				i, r.Name, r.Version, r.Status.ExecutionCount, r.State, r.ETag, stored.Version, stored.ETag, want.name, want.version, want.count, want.state)
		}
	}
	if got, _ := s.GetJob(ctx, "c", "n1"); got == nil || got.Tags["team"] != "ops" || len(got.Tags) != 1 || recs[0].Tags["team"] != "ops" {
		t.Errorf("n1's tags: stored %v, returned %v; want team=ops", got.Tags, recs[0].Tags)
	}
	if d := recs[2].Definition(); d.StateReason != "not yet" {
		t.Errorf("the Disabled job's stateReason = %q, want %q", d.StateReason, "not yet")
	}
	if recs[0].Schedule.NextOccurrence.IsZero() || recs[0].Status.NextExecutionTime == nil {
		t.Errorf("n1 has no next occurrence: %+v", recs[0].Schedule)
	}

	// IfMatch "*": each job must exist.
	_, err = s.PutJobs(ctx, "c", []scheduler.JobPut{{Name: "n1", Job: batchJob(t)}, {Name: "x", Job: batchJob(t)}}, &scheduler.PutJobOptions{IfMatch: "*"})
	wantItems(t, `PutJobs(IfMatch "*", x missing)`, err, item{1, scheduler.ErrPreconditionFailed, ""})
	// A schedule more frequent than the collection allows.
	everySecond := batchJob(t)
	everySecond.Recurrence = recurrence.Cron("* * * * * *")
	_, err = s.PutJobs(ctx, "c", []scheduler.JobPut{{Name: "n1", Job: batchJob(t)}, {Name: "fast", Job: everySecond}}, nil)
	wantItems(t, "PutJobs(every second)", err, item{1, scheduler.ErrQuotaExceeded, ""})
	if !bulk {
		return
	}
	if got, _ := s.GetJob(ctx, "c", "n1"); got.Version != 1 {
		t.Errorf("after refused batches n1 has version %d, want 1", got.Version)
	}
	// The quota: 3 jobs of 4, so a batch can create one more.
	_, err = s.PutJobs(ctx, "c", []scheduler.JobPut{{Name: "n1", Job: batchJob(t)}, {Name: "x", Job: batchJob(t)}, {Name: "y", Job: batchJob(t)}}, nil)
	if !errors.Is(err, scheduler.ErrQuotaExceeded) {
		t.Errorf("PutJobs(2 creates into 3 of 4) = %v, want ErrQuotaExceeded", err)
	}
	if got := jobNamesOf(t, s, "c"); !slices.Equal(got, []string{"n1", "n2", "old"}) {
		t.Errorf("jobs %v, want n1 n2 old", got)
	}
	if _, err := s.PutJobs(ctx, "c", []scheduler.JobPut{{Name: "n1", Job: batchJob(t)}, {Name: "x", Job: batchJob(t)}}, nil); err != nil {
		t.Errorf("PutJobs(1 create into 3 of 4): %v", err)
	}
}

// TestPutJobsOneAtATime: over a store that is no BulkPutter, a batch
// stops at the first job the store refuses, and what was put before it
// stays.
func TestPutJobsOneAtATime(t *testing.T) {
	ctx := context.Background()
	s, err := scheduler.New(plainStore{memory.New()}, &scheduler.Config{Logger: discard})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutCollection(ctx, "c", &scheduler.JobCollection{Properties: scheduler.CollectionProperties{
		Quota: &scheduler.Quota{MaxJobCount: 2}}}, nil); err != nil {
		t.Fatal(err)
	}
	recs, err := s.PutJobs(ctx, "c", []scheduler.JobPut{{Name: "a", Job: batchJob(t)}, {Name: "b", Job: batchJob(t)}, {Name: "x", Job: batchJob(t)}}, nil)
	wantItems(t, "PutJobs(3 jobs into a quota of 2, one at a time)", err, item{2, scheduler.ErrQuotaExceeded, ""})
	if len(recs) != 2 || !slices.Equal(jobNamesOf(t, s, "c"), []string{"a", "b"}) {
		t.Errorf("PutJobs returned %d records, stored %v; want a and b", len(recs), jobNamesOf(t, s, "c"))
	}
}

// TestPutJobsLargeBatch: a batch large enough to be checked in parts
// reports every invalid job, at its index and in the batch's order,
// whichever part it is in; a valid one is written whole, its records in
// the batch's order.
func TestPutJobsLargeBatch(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, scheduler.Config{})
	const n = 1500
	if _, err := e.s.PutCollection(ctx, "big", &scheduler.JobCollection{Properties: scheduler.CollectionProperties{
		Quota: &scheduler.Quota{MaxJobCount: n}}}, nil); err != nil {
		t.Fatal(err)
	}
	batch := make([]scheduler.JobPut, n)
	for i := range batch {
		batch[i] = scheduler.JobPut{Name: fmt.Sprintf("j%04d", i), Job: batchJob(t)}
	}
	bad := slices.Clone(batch)
	var want []item
	for _, i := range []int{0, 255, 256, 511, 700, 1023, 1200, 1499} {
		switch i % 3 {
		case 0:
			bad[i].Name = "1bad"
			want = append(want, item{i, scheduler.ErrInvalid, "name"})
		case 1:
			j := batchJob(t)
			j.State = scheduler.JobFaulted
			bad[i].Job = j
			want = append(want, item{i, scheduler.ErrInvalid, "state"})
		default:
			bad[i].Name = bad[5].Name // a name an earlier job has
			want = append(want, item{i, scheduler.ErrInvalid, "name"})
		}
	}
	_, err := e.s.PutJobs(ctx, "big", bad, nil)
	wantItems(t, "PutJobs(1,500 jobs, 8 of them bad)", err, want...)
	if got := jobNamesOf(t, e.s, "big"); len(got) != 0 {
		t.Errorf("after the refused batch: %d jobs, want none", len(got))
	}
	// Into a missing collection, the checks still come first.
	_, err = e.s.PutJobs(ctx, "none", bad, nil)
	wantItems(t, "PutJobs(1,500 jobs, 8 of them bad, into a missing collection)", err, want...)

	recs, err := e.s.PutJobs(ctx, "big", batch, nil)
	if err != nil {
		t.Fatalf("PutJobs(1,500 jobs): %v", err)
	}
	if len(recs) != n {
		t.Fatalf("PutJobs(1,500 jobs) returned %d records, want %d", len(recs), n)
	}
	for i, r := range recs {
		if r.Name != batch[i].Name || r.Version != 1 || r.Schedule.NextOccurrence.IsZero() {
			t.Fatalf("record %d = %s version %d next %v, want %s version 1 with a next occurrence", i, r.Name, r.Version, r.Schedule.NextOccurrence, batch[i].Name)
		}
	}
	for _, i := range []int{0, 255, 256, 1023, n - 1} {
		if got, err := e.s.GetJob(ctx, "big", batch[i].Name); err != nil || got.ETag != recs[i].ETag {
			t.Errorf("after the batch: GetJob(%s) = %v, %v; want the record PutJobs returned", batch[i].Name, got, err)
		}
	}
}

// panicPayload is the payload of an action whose Validate panics for N 7.
type panicPayload struct{ N int }

func (p panicPayload) Validate() error {
	if p.N == 7 {
		panic("validator bug")
	}
	return nil
}

// A panic in an executor's validator during PutJobs reaches the caller's
// goroutine, where its recover sees it, whatever the batch's size: a
// batch of 512 jobs or more is checked in parts on goroutines of their
// own, and the panic comes back as a *PartPanic with the value and the
// stack of the check.
func TestPutJobsValidatorPanicReachesCaller(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0)))) // parts on goroutines
	for _, n := range []int{511, 600, 1500} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			ctx := context.Background()
			reg := &action.Registry{}
			h := action.Handle(reg, "Thing", func(ctx context.Context, req *action.Request, p panicPayload) error { return nil })
			s, err := scheduler.New(memory.New(), &scheduler.Config{Executors: reg, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			col := &scheduler.JobCollection{Properties: scheduler.CollectionProperties{Quota: &scheduler.Quota{MaxJobCount: 2000}}}
			if _, err := s.PutCollection(ctx, "c", col, nil); err != nil {
				t.Fatal(err)
			}
			batch := make([]scheduler.JobPut, n)
			for i := range batch {
				batch[i] = scheduler.JobPut{Name: fmt.Sprintf("j%04d", i), Job: &scheduler.Job{Action: h.Action(panicPayload{N: i % 500})}}
			}
			v := func() (v any) {
				defer func() { v = recover() }()
				s.PutJobs(ctx, "c", batch, nil)
				return nil
			}()
			if n < 512 {
				if v != "validator bug" {
					t.Fatalf("PutJobs of %d jobs: recovered %v, want the validator's panic", n, v)
				}
				return
			}
			pp, ok := v.(*scheduler.PartPanic)
			if !ok {
				t.Fatalf("PutJobs of %d jobs: recovered %#v, want a *PartPanic", n, v)
			}
			if pp.Value != "validator bug" || !strings.Contains(string(pp.Stack), "panicPayload.Validate") {
				t.Errorf("PutJobs of %d jobs: PartPanic{Value: %v, Stack: %s}, want the validator's value and stack", n, pp.Value, pp.Stack)
			}
			if msg := pp.Error(); !strings.Contains(msg, "validator bug") || !strings.Contains(msg, "panicPayload.Validate") {
				t.Errorf("PartPanic.Error() = %q, want the value and the stack", msg)
			}
			if got := jobNamesOf(t, s, "c"); len(got) != 0 {
				t.Errorf("after the panic: %d jobs, want none", len(got))
			}
		})
	}
}

// PartPanic unwraps to an error its check panicked with, and only to an
// error.
func TestPartPanicUnwrap(t *testing.T) {
	err := error(&scheduler.PartPanic{Value: fmt.Errorf("check: %w", context.Canceled)})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("errors.Is(%v, context.Canceled) = false, want true", err)
	}
	if err := (&scheduler.PartPanic{Value: "x"}).Unwrap(); err != nil {
		t.Errorf("PartPanic{Value: \"x\"}.Unwrap() = %v, want nil", err)
	}
}

// TestPutJobsReportsQuotaWithInvalid: a batch with invalid jobs reports,
// in the same answer and in the batch's order, the jobs that are
// otherwise valid but recur more often than the collection allows; and
// maxJobCount is counted only for a batch without items. Nothing is
// written, over either kind of store.
func TestPutJobsReportsQuotaWithInvalid(t *testing.T) {
	for _, tt := range []struct {
		name  string
		store func() scheduler.Store
	}{
		{"bulk", func() scheduler.Store { return memory.New() }},
		{"one at a time", func() scheduler.Store { return plainStore{memory.New()} }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			s, err := scheduler.New(tt.store(), &scheduler.Config{Logger: discard})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.PutCollection(ctx, "c", &scheduler.JobCollection{Properties: scheduler.CollectionProperties{
				SKU: &scheduler.SKU{Name: scheduler.SKUStandard}}}, nil); err != nil {
				t.Fatal(err)
			}
			every5s, err := scheduler.ParseJob([]byte(jobJSON(time.Time{}, `"recurrence": {"frequency": "Second", "interval": 5}`)), nil)
			if err != nil {
				t.Fatal(err)
			}
			batch := []scheduler.JobPut{
				{Name: "a", Job: batchJob(t)},
				{Name: "a", Job: batchJob(t)},
				{Name: "b", Job: &scheduler.Job{}},
				{Name: "c", Job: every5s},
				{Name: "bad name!", Job: batchJob(t)},
			}
			_, err = s.PutJobs(ctx, "c", batch, nil)
			wantItems(t, "PutJobs(invalid and too frequent jobs)", err,
				item{1, scheduler.ErrInvalid, "name"},
				item{2, scheduler.ErrInvalid, ""},
				item{3, scheduler.ErrQuotaExceeded, ""},
				item{4, scheduler.ErrInvalid, "name"},
			)
			if got := jobNamesOf(t, s, "c"); len(got) != 0 {
				t.Errorf("after the refused batch: jobs %v, want none", got)
			}

			// maxJobCount: a Free-sized quota of 2, one job in it; a
			// batch of two creates and an invalid job is refused for the
			// invalid job alone; fixed, for the count.
			if _, err := s.PutCollection(ctx, "q", &scheduler.JobCollection{Properties: scheduler.CollectionProperties{
				Quota: &scheduler.Quota{MaxJobCount: 2}}}, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := s.PutJob(ctx, "q", "x", batchJob(t), nil); err != nil {
				t.Fatal(err)
			}
			batch = []scheduler.JobPut{{Name: "y", Job: batchJob(t)}, {Name: "z", Job: &scheduler.Job{}}}
			_, err = s.PutJobs(ctx, "q", batch, nil)
			wantItems(t, "PutJobs(over maxJobCount, one invalid)", err, item{1, scheduler.ErrInvalid, ""})
			if errors.Is(err, scheduler.ErrQuotaExceeded) {
				t.Errorf("PutJobs(over maxJobCount, one invalid) = %v, want no ErrQuotaExceeded", err)
			}
			batch[1].Job = batchJob(t)
			_, err = s.PutJobs(ctx, "q", batch, nil)
			if !errors.Is(err, scheduler.ErrQuotaExceeded) {
				t.Errorf("PutJobs(over maxJobCount) = %v, want ErrQuotaExceeded", err)
			}
		})
	}
}
