package postgres_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
)

// TestRecordBatchMixed records one batch (one statement) that mixes good
// outcomes with 0 to 3 history entries, leases taken over by another
// owner, stale versions, deleted jobs and a deleted collection, across
// two collections, and checks each element's error, each job's row and
// every history row, in recording order.
func TestRecordBatchMixed(t *testing.T) {
	schema := newSchema(t)
	s := open(t, schema)
	put := func(coll, name string, due time.Time) {
		t.Helper()
		j := &scheduler.JobRecord{Collection: coll, Name: name, Job: &scheduler.Job{}, State: scheduler.JobEnabled, Schedule: scheduler.JobSchedule{DueAt: due}}
		if err := s.PutJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []string{"a", "b", "gone"} {
		if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: c}); err != nil {
			t.Fatal(err)
		}
	}
	// Jobs l*: claimed by me, then taken over by other once the lease ended.
	for i := range 4 {
		put("a", fmt.Sprintf("l%d", i), t0)
	}
	if got, err := s.ClaimDue(ctx, t0, "me", t0.Add(time.Minute), 100); err != nil || len(got) != 4 {
		t.Fatalf("first claim = %d jobs, %v", len(got), err)
	}
	if got, err := s.ClaimDue(ctx, t0.Add(time.Minute), "other", t0.Add(time.Hour), 100); err != nil || len(got) != 4 {
		t.Fatalf("takeover = %d jobs, %v", len(got), err)
	}
	// The rest: claimed by me.
	for i := range 12 {
		put([]string{"a", "b"}[i%2], fmt.Sprintf("g%02d", i), t0.Add(2*time.Minute))
	}
	for i := range 3 {
		put("gone", fmt.Sprintf("x%d", i), t0.Add(2*time.Minute))
	}
	claimed, err := s.ClaimDue(ctx, t0.Add(2*time.Minute), "me", t0.Add(time.Hour), 100)
	if err != nil || len(claimed) != 15 {
		t.Fatalf("claim = %d jobs, %v; want 15", len(claimed), err)
	}
	mine := map[string]*scheduler.JobRecord{}
	for _, j := range claimed {
		mine[j.ID()] = j
	}
	lost := func(name string) *scheduler.JobRecord {
		j, err := s.GetJob(ctx, "a", name)
		if err != nil {
			t.Fatal(err)
		}
		j.Version-- // the version my claim gave it
		return j
	}
	for _, id := range [][2]string{{"a", "g04"}, {"b", "g07"}} {
		if err := s.DeleteJob(ctx, id[0], id[1], ""); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteCollection(ctx, "gone", ""); err != nil {
		t.Fatal(err)
	}
	done := func(j *scheduler.JobRecord, k int) *scheduler.JobRecord {
		j = j.Clone()
		j.Status.ExecutionCount = k + 1
		j.Schedule.DueAt = t0.Add(time.Duration(k+3) * time.Hour)
		return j
	}
	stale := func(j *scheduler.JobRecord) *scheduler.JobRecord {
		j = j.Clone()
		j.Version--
		return j
	}
	type elem struct {
		job     *scheduler.JobRecord
		entries int
		want    error
	}
	elems := []elem{
		{done(mine["a/g00"], 0), 2, nil},
		{lost("l0"), 1, scheduler.ErrLeaseLost},
		{done(mine["b/g01"], 1), 0, nil},
		{done(mine["gone/x0"], 0), 1, scheduler.ErrNotFound},
		{stale(mine["a/g02"]), 1, scheduler.ErrConflict},
		{done(mine["b/g03"], 2), 3, nil},
		{done(mine["a/g04"], 0), 1, scheduler.ErrNotFound},
		{lost("l1"), 0, scheduler.ErrLeaseLost},
		{done(mine["b/g05"], 3), 1, nil},
		{done(mine["a/g06"], 4), 2, nil},
		{done(mine["b/g07"], 0), 2, scheduler.ErrNotFound},
		{lost("l2"), 2, scheduler.ErrLeaseLost},
		{stale(mine["a/g08"]), 0, scheduler.ErrConflict},
		{done(mine["b/g09"], 5), 1, nil},
		{done(mine["gone/x1"], 0), 0, scheduler.ErrNotFound},
		{done(mine["a/g10"], 6), 1, nil},
		{done(mine["b/g11"], 7), 3, nil},
	}
	batch := make([]scheduler.RecordRequest, len(elems))
	var wantHistory []string // job and message of each row, in recording order
	for i, e := range elems {
		batch[i].Job = e.job
		for k := range e.entries {
			msg := fmt.Sprintf("%d.%d", i, k)
			batch[i].History = append(batch[i].History, scheduler.HistoryEntry{Collection: e.job.Collection, Job: e.job.Name,
				ActionName: scheduler.MainAction, Status: scheduler.StatusCompleted, Message: msg, StartTime: t0, EndTime: t0.Add(time.Duration(i) * time.Second)})
			if e.want == nil {
				wantHistory = append(wantHistory, e.job.ID()+" "+msg)
			}
		}
	}
	errs := s.RecordBatch(ctx, "me", batch)
	if len(errs) != len(elems) {
		t.Fatalf("RecordBatch returned %d errors for %d elements", len(errs), len(elems))
	}
	for i, e := range elems {
		if e.want == nil && errs[i] != nil || e.want != nil && !errors.Is(errs[i], e.want) {
			t.Errorf("element %d (%s): %v, want %v", i, e.job.ID(), errs[i], e.want)
		}
		j, err := s.GetJob(ctx, e.job.Collection, e.job.Name)
		switch {
		case e.want == scheduler.ErrNotFound:
			if !errors.Is(err, scheduler.ErrNotFound) {
				t.Errorf("%s: GetJob = %v, want ErrNotFound", e.job.ID(), err)
			}
			continue
		case err != nil:
			t.Fatal(err)
		}
		switch e.want {
		case nil:
			if j.Version != e.job.Version+1 || j.LeaseOwner != "" || !j.LeaseUntil.IsZero() || j.Status.ExecutionCount != e.job.Status.ExecutionCount ||
				!j.Schedule.DueAt.Equal(e.job.Schedule.DueAt) {
				t.Errorf("%s recorded: version %d owner %q until %v count %d due %v; want %d, none, none, %d, %v", j.ID(), j.Version, j.LeaseOwner,
					j.LeaseUntil, j.Status.ExecutionCount, j.Schedule.DueAt, e.job.Version+1, e.job.Status.ExecutionCount, e.job.Schedule.DueAt)
			}
		case scheduler.ErrLeaseLost:
			if j.LeaseOwner != "other" || j.Version != e.job.Version+1 || j.Status.ExecutionCount != 0 {
				t.Errorf("%s after a lost lease: owner %q version %d count %d; want other, %d, 0", j.ID(), j.LeaseOwner, j.Version, j.Status.ExecutionCount, e.job.Version+1)
			}
		case scheduler.ErrConflict:
			if j.LeaseOwner != "me" || j.Version != e.job.Version+1 || j.Status.ExecutionCount != 0 {
				t.Errorf("%s after a stale version: owner %q version %d count %d; want me, %d, 0", j.ID(), j.LeaseOwner, j.Version, j.Status.ExecutionCount, e.job.Version+1)
			}
		}
	}
	rows, err := connect(t).Query(ctx, "SELECT collection || '/' || job || ' ' || (entry->>'message') FROM "+pgx.Identifier{schema}.Sanitize()+".history ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, wantHistory) {
		t.Errorf("history rows in recording order:\n got %q\nwant %q", got, wantHistory)
	}
}

// TestRecordBatchDefinitions: a batch whose records share definitions
// (the same *Job) stores each record's own definition, whatever the
// order.
func TestRecordBatchDefinitions(t *testing.T) {
	s := open(t, newSchema(t))
	if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c"}); err != nil {
		t.Fatal(err)
	}
	def := func(uri string) *scheduler.Job {
		return &scheduler.Job{Action: action.Action{Type: action.HTTP, Request: &action.HTTPRequest{URI: uri, Method: "GET"}}}
	}
	p, q, r := def("http://p/"), def("http://q/"), def("http://r/")
	uses := []*scheduler.Job{p, q, p, r, q, p}
	for i := range uses {
		j := &scheduler.JobRecord{Collection: "c", Name: fmt.Sprint(i), Job: def("http://put/"), State: scheduler.JobEnabled,
			Schedule: scheduler.JobSchedule{DueAt: t0}}
		if err := s.PutJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	claimed, err := s.ClaimDue(ctx, t0, "me", t0.Add(time.Minute), 100)
	if err != nil || len(claimed) != len(uses) {
		t.Fatalf("claim = %d jobs, %v", len(claimed), err)
	}
	batch := make([]scheduler.RecordRequest, len(claimed))
	for i, j := range claimed {
		j.Job = uses[i]
		batch[i] = scheduler.RecordRequest{Job: j}
	}
	for i, err := range s.RecordBatch(ctx, "me", batch) {
		if err != nil {
			t.Fatalf("element %d: %v", i, err)
		}
	}
	for i, j := range claimed {
		got, err := s.GetJob(ctx, "c", j.Name)
		if err != nil {
			t.Fatal(err)
		}
		if want := uses[i].Action.Request.URI; got.Job.Action.Request.URI != want {
			t.Errorf("job %s: stored URI %s, want %s", j.Name, got.Job.Action.Request.URI, want)
		}
	}
}
