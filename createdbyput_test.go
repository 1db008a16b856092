package scheduler_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/store/memory"
)

// TestCreatedByPut: the record a put returns says whether that put
// created the job: PutJob, PutJobJSON and PutJobs (through a BulkPutter,
// and one job at a time over a store that is none) report the create and
// nothing else, not a put that changes the job nor one that writes
// nothing; GetJob never reports it.
func TestCreatedByPut(t *testing.T) {
	stores := map[string]func(t *testing.T) scheduler.Store{
		"memory": func(*testing.T) scheduler.Store { return memory.New() },
		"sqlite": openSQLite,
		// The store without its optional interfaces: PutJobs puts one
		// job at a time, PutJob reads before it creates.
		"plain": func(*testing.T) scheduler.Store { return struct{ scheduler.Store }{memory.New()} },
	}
	for name, newStore := range stores {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s, err := scheduler.New(newStore(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.PutCollection(ctx, "c", nil, nil); err != nil {
				t.Fatal(err)
			}
			const hourly = `{"action": {"type": "Http", "request": {"uri": "http://example.com/", "method": "GET"}},
				"recurrence": {"frequency": "Hour"}, "state": "Disabled"}`
			def, err := s.ParseJob([]byte(hourly))
			if err != nil {
				t.Fatal(err)
			}
			daily, err := s.ParseJob([]byte(`{"action": {"type": "Http", "request": {"uri": "http://example.com/", "method": "GET"}},
				"recurrence": {"frequency": "Day"}, "state": "Disabled"}`))
			if err != nil {
				t.Fatal(err)
			}
			want := func(call string, r *scheduler.JobRecord, err error, created bool) {
				t.Helper()
				if err != nil {
					t.Fatalf("%s: %v", call, err)
				}
				if r.CreatedByPut != created {
					t.Errorf("%s: CreatedByPut = %v, want %v", call, r.CreatedByPut, created)
				}
			}
			r, err := s.PutJob(ctx, "c", "a", def, nil)
			want("PutJob of a new job", r, err, true)
			r, err = s.PutJob(ctx, "c", "a", def, nil)
			want("PutJob of the job as it is", r, err, false)
			if r.Version != 1 {
				t.Errorf("PutJob of the job as it is: Version %d, want 1 (nothing written)", r.Version)
			}
			r, err = s.PutJob(ctx, "c", "a", daily, nil)
			want("PutJob that changes the job", r, err, false)
			r, err = s.GetJob(ctx, "c", "a")
			want("GetJob", r, err, false)
			r, err = s.PutJobJSON(ctx, "c", "b", []byte(hourly), nil)
			want("PutJobJSON of a new job", r, err, true)
			r, err = s.PutJobJSON(ctx, "c", "b", []byte(hourly), nil)
			want("PutJobJSON of the job as it is", r, err, false)

			recs, err := s.PutJobs(ctx, "c", []scheduler.JobPut{{Name: "a", Job: def}, {Name: "b", Job: def}, {Name: "new", Job: def}}, nil)
			if err != nil {
				t.Fatalf("PutJobs: %v", err)
			}
			var got []bool
			for _, r := range recs {
				got = append(got, r.CreatedByPut)
			}
			if diff := cmp.Diff([]bool{false, false, true}, got); diff != "" {
				t.Errorf("PutJobs of a changed job, an unchanged one and a new one: CreatedByPut (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPutJobsIfNoneMatch: PutJobs with IfNoneMatch "*" creates a batch of
// new jobs, and refuses one that holds a job that exists with an item
// matching ErrPreconditionFailed for it, writing nothing; of such batches
// at once exactly one creates its jobs; any other value is refused at
// IfNoneMatch. On a BulkPutter and, one job at a time, on a store that is
// none.
func TestPutJobsIfNoneMatch(t *testing.T) {
	stores := map[string]func(t *testing.T) scheduler.Store{
		"memory": func(*testing.T) scheduler.Store { return memory.New() },
		"sqlite": openSQLite,
		"plain":  func(*testing.T) scheduler.Store { return struct{ scheduler.Store }{memory.New()} },
	}
	for name, newStore := range stores {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s, err := scheduler.New(newStore(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.PutCollection(ctx, "c", nil, nil); err != nil {
				t.Fatal(err)
			}
			def, err := s.ParseJob([]byte(`{"action": {"type": "Http", "request": {"uri": "http://example.com/", "method": "GET"}},
				"recurrence": {"frequency": "Hour"}, "state": "Disabled"}`))
			if err != nil {
				t.Fatal(err)
			}
			create := &scheduler.PutJobOptions{IfNoneMatch: "*"}
			if _, err := s.PutJobs(ctx, "c", []scheduler.JobPut{{Name: "a", Job: def}}, &scheduler.PutJobOptions{IfNoneMatch: "x"}); !errors.Is(err, scheduler.ErrInvalid) {
				t.Errorf(`PutJobs with IfNoneMatch "x" = %v, want ErrInvalid`, err)
			}
			recs, err := s.PutJobs(ctx, "c", []scheduler.JobPut{{Name: "a", Job: def}, {Name: "b", Job: def}}, create)
			if err != nil || len(recs) != 2 || !recs[0].CreatedByPut || !recs[1].CreatedByPut {
				t.Fatalf("PutJobs of new jobs with IfNoneMatch * = %v, %v; want both created", recs, err)
			}
			_, err = s.PutJobs(ctx, "c", []scheduler.JobPut{{Name: "new", Job: def}, {Name: "b", Job: def}}, create)
			var pe *scheduler.PutJobsError
			if !errors.As(err, &pe) || len(pe.Items) != 1 || pe.Items[0].Name != "b" || !errors.Is(pe.Items[0].Err, scheduler.ErrPreconditionFailed) {
				t.Errorf("PutJobs with IfNoneMatch * of a batch holding an existing job = %v, want one item for b matching ErrPreconditionFailed", err)
			}
			if name != "plain" {
				// A BulkPutter writes all jobs or none.
				if _, err := s.GetJob(ctx, "c", "new"); !errors.Is(err, scheduler.ErrNotFound) {
					t.Errorf("GetJob of the new job of the refused batch = %v, want ErrNotFound", err)
				}
			}

			const n = 6
			var wg sync.WaitGroup
			errs := make([]error, n)
			for i := range n {
				wg.Go(func() {
					_, errs[i] = s.PutJobs(ctx, "c", []scheduler.JobPut{{Name: "x", Job: def}, {Name: "y", Job: def}}, create)
				})
			}
			wg.Wait()
			created := 0
			for i, err := range errs {
				switch {
				case err == nil:
					created++
				case !errors.Is(err, scheduler.ErrPreconditionFailed):
					t.Errorf("concurrent PutJobs %d: %v, want nil or ErrPreconditionFailed", i, err)
				}
			}
			if created != 1 {
				t.Errorf("%d of %d concurrent PutJobs with IfNoneMatch * created their jobs, want 1", created, n)
			}
		})
	}
}
