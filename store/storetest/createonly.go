package storetest

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"

	scheduler "github.com/jobclock/scheduler"
)

// racers is how many writers testCreateOnly races to create one record.
const racers = 8

// race runs put racers times at once and checks that exactly one call
// succeeded and that every other failed with an error matching lost.
func race(t *testing.T, what string, lost error, put func(i int) error) {
	t.Helper()
	errs := make([]error, racers)
	var wg sync.WaitGroup
	for i := range racers {
		wg.Go(func() { errs[i] = put(i) })
	}
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, lost):
			t.Errorf("%s %d of %d at once: %v, want nil or an error matching %v", what, i, racers, err, lost)
		}
	}
	if won != 1 {
		t.Errorf("%d of %d %s at once succeeded, want exactly 1", won, racers, what)
	}
}

// testCreateOnly checks that a create is one step: of several creates of
// one collection at once (Version 0), exactly one succeeds and the others
// fail with ErrConflict; and, over a Scheduler on the store, that of
// several puts at once with IfNoneMatch "*" of one collection, one
// calendar, one job or one batch of jobs (PutJobs), exactly one creates it
// and the others fail with ErrPreconditionFailed, leaving what it created
// as it is.
func testCreateOnly(t *testing.T, st scheduler.Store) {
	race(t, "store creates of a collection", scheduler.ErrConflict, func(i int) error {
		return st.PutCollection(ctx, &scheduler.CollectionRecord{Name: "raw", ETag: fmt.Sprint("e", i), Created: t0, Updated: t0})
	})

	s, err := scheduler.New(st, &scheduler.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	etags := make([]string, racers)
	race(t, "create-only puts of a collection", scheduler.ErrPreconditionFailed, func(i int) error {
		c, err := s.PutCollection(ctx, "c", nil, &scheduler.PutCollectionOptions{IfNoneMatch: "*"})
		if err == nil {
			etags[i] = c.ETag
		}
		return err
	})
	if c, err := s.GetCollection(ctx, "c"); err != nil || !contains(etags, c.ETag) || c.Version != 1 {
		t.Errorf("GetCollection after the create-only puts = %+v, %v; want version 1 with the ETag of the put that succeeded, one of %q", c, err, etags)
	}

	race(t, "create-only puts of a calendar", scheduler.ErrPreconditionFailed, func(i int) error {
		def := &scheduler.Calendar{Properties: scheduler.CalendarProperties{Dates: []string{fmt.Sprintf("2030-12-%02d", 10+i)}}}
		c, err := s.PutCalendar(ctx, "c", "holidays", def, &scheduler.PutCalendarOptions{IfNoneMatch: "*"})
		if err == nil {
			etags[i] = c.ETag
			if !c.Created {
				t.Errorf("PutCalendar %d with IfNoneMatch * succeeded with Created false", i)
			}
		}
		return err
	})
	if c, err := s.GetCalendar(ctx, "c", "holidays"); err != nil || !contains(etags, c.ETag) {
		t.Errorf("GetCalendar after the create-only puts = %+v, %v; want the ETag of the put that succeeded, one of %q", c, err, etags)
	}

	race(t, "create-only puts of a job", scheduler.ErrPreconditionFailed, func(i int) error {
		j, err := s.PutJob(ctx, "c", "j", def(), &scheduler.PutJobOptions{IfNoneMatch: "*"})
		if err == nil {
			etags[i] = j.ETag
		}
		return err
	})
	if j, err := s.GetJob(ctx, "c", "j"); err != nil || !contains(etags, j.ETag) {
		t.Errorf("GetJob after the create-only puts = %+v, %v; want the ETag of the put that succeeded, one of %q", j, err, etags)
	}

	race(t, "create-only batches of two jobs", scheduler.ErrPreconditionFailed, func(i int) error {
		recs, err := s.PutJobs(ctx, "c", []scheduler.JobPut{{Name: "x", Job: def()}, {Name: "y", Job: def()}}, &scheduler.PutJobOptions{IfNoneMatch: "*"})
		if err == nil {
			etags[i] = recs[0].ETag
		}
		return err
	})
	if j, err := s.GetJob(ctx, "c", "x"); err != nil || !contains(etags, j.ETag) {
		t.Errorf("GetJob after the create-only batches = %+v, %v; want the ETag of the batch that succeeded, one of %q", j, err, etags)
	}
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s && s != "" {
			return true
		}
	}
	return false
}
