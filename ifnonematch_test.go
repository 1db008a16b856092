package scheduler_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/store/memory"
)

// TestPutJobIfNoneMatch: PutJobOptions.IfNoneMatch "*" creates the job
// and leaves one that exists as it is, failing with ErrPreconditionFailed;
// of several such puts at once exactly one creates it; any other value is
// refused.
func TestPutJobIfNoneMatch(t *testing.T) {
	stores := map[string]func(t *testing.T) scheduler.Store{
		"memory": func(*testing.T) scheduler.Store { return memory.New() },
		"sqlite": openSQLite,
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
			first, err := s.PutJob(ctx, "c", "j", def, create)
			if err != nil || first.Version != 1 {
				t.Fatalf("PutJob of a new job with IfNoneMatch * = %v, %v; want a created job", first, err)
			}
			if _, err := s.PutJob(ctx, "c", "j", def, create); !errors.Is(err, scheduler.ErrPreconditionFailed) {
				t.Errorf("PutJob of an existing job with IfNoneMatch * = %v, want ErrPreconditionFailed", err)
			}
			if got, err := s.GetJob(ctx, "c", "j"); err != nil || got.ETag != first.ETag {
				t.Errorf("GetJob after the refused put = %v, %v; want ETag %q", got, err, first.ETag)
			}
			if _, err := s.PutJob(ctx, "c", "j", def, &scheduler.PutJobOptions{IfNoneMatch: `"x"`}); !errors.Is(err, scheduler.ErrInvalid) {
				t.Errorf(`PutJob with IfNoneMatch "x" = %v, want ErrInvalid`, err)
			}

			const n = 8
			var wg sync.WaitGroup
			errs := make([]error, n)
			for i := range n {
				wg.Go(func() { _, errs[i] = s.PutJob(ctx, "c", "k", def, create) })
			}
			wg.Wait()
			created := 0
			for i, err := range errs {
				switch {
				case err == nil:
					created++
				case !errors.Is(err, scheduler.ErrPreconditionFailed):
					t.Errorf("concurrent put %d: %v, want nil or ErrPreconditionFailed", i, err)
				}
			}
			if created != 1 {
				t.Errorf("%d of %d concurrent puts with IfNoneMatch * created the job, want 1", created, n)
			}
		})
	}
}

// TestPutCollectionAndCalendarIfNoneMatch: IfNoneMatch "*" on a put of a
// collection or calendar creates it and leaves one that exists as it is,
// failing with ErrPreconditionFailed; any other value is refused at
// "IfNoneMatch", writing nothing. (storetest's CreateOnly races them.)
func TestPutCollectionAndCalendarIfNoneMatch(t *testing.T) {
	ctx := context.Background()
	s, err := scheduler.New(memory.New(), nil)
	if err != nil {
		t.Fatal(err)
	}
	wantPath := func(what string, err error) {
		t.Helper()
		errs := scheduler.ValidationErrors(err)
		if !errors.Is(err, scheduler.ErrInvalid) || len(errs) != 1 || errs[0].Path != "IfNoneMatch" {
			t.Errorf(`%s with an IfNoneMatch other than "*" = %v, want ErrInvalid at IfNoneMatch`, what, err)
		}
	}
	_, err = s.PutCollection(ctx, "c", nil, &scheduler.PutCollectionOptions{IfNoneMatch: `"x"`})
	wantPath("PutCollection", err)
	if _, err := s.GetCollection(ctx, "c"); !errors.Is(err, scheduler.ErrNotFound) {
		t.Errorf("GetCollection after the refused put = %v, want ErrNotFound", err)
	}
	create := &scheduler.PutCollectionOptions{IfNoneMatch: "*"}
	first, err := s.PutCollection(ctx, "c", nil, create)
	if err != nil || first.Version != 1 {
		t.Fatalf("PutCollection of a new collection with IfNoneMatch * = %v, %v; want it created", first, err)
	}
	if _, err := s.PutCollection(ctx, "c", nil, create); !errors.Is(err, scheduler.ErrPreconditionFailed) {
		t.Errorf("PutCollection of an existing collection with IfNoneMatch * = %v, want ErrPreconditionFailed", err)
	}
	if got, err := s.GetCollection(ctx, "c"); err != nil || got.ETag != first.ETag {
		t.Errorf("GetCollection after the refused put = %v, %v; want ETag %q", got, err, first.ETag)
	}

	cal := &scheduler.Calendar{Properties: scheduler.CalendarProperties{Dates: []string{"2030-12-25"}}}
	_, err = s.PutCalendar(ctx, "c", "h", cal, &scheduler.PutCalendarOptions{IfNoneMatch: "abc"})
	wantPath("PutCalendar", err)
	if _, err := s.GetCalendar(ctx, "c", "h"); !errors.Is(err, scheduler.ErrNotFound) {
		t.Errorf("GetCalendar after the refused put = %v, want ErrNotFound", err)
	}
	calCreate := &scheduler.PutCalendarOptions{IfNoneMatch: "*"}
	made, err := s.PutCalendar(ctx, "c", "h", cal, calCreate)
	if err != nil || !made.Created {
		t.Fatalf("PutCalendar of a new calendar with IfNoneMatch * = %v, %v; want it created", made, err)
	}
	other := &scheduler.Calendar{Properties: scheduler.CalendarProperties{Dates: []string{"2030-12-26"}}}
	if _, err := s.PutCalendar(ctx, "c", "h", other, calCreate); !errors.Is(err, scheduler.ErrPreconditionFailed) {
		t.Errorf("PutCalendar of an existing calendar with IfNoneMatch * = %v, want ErrPreconditionFailed", err)
	}
	if got, err := s.GetCalendar(ctx, "c", "h"); err != nil || got.ETag != made.ETag {
		t.Errorf("GetCalendar after the refused put = %v, %v; want ETag %q", got, err, made.ETag)
	}
}
