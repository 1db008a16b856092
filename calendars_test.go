package scheduler_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/recurrence"
	"github.com/jobclock/scheduler/store/memory"
	"github.com/jobclock/scheduler/store/sqlite"
)

func holidays() *scheduler.Calendar {
	return &scheduler.Calendar{Properties: scheduler.CalendarProperties{
		TimeZone: "Europe/Berlin",
		Dates:    []string{"2026-12-25", "2026-12-26"},
		Ranges:   []scheduler.CalendarRange{{Start: "2026-12-24T12:00:00", End: "2027-01-02T00:00:00"}},
		Rules: []*recurrence.Recurrence{{Frequency: recurrence.Year,
			Schedule: &recurrence.Schedule{Months: []int{5}, MonthDays: []int{1}}}},
	}}
}

// sqliteScheduler returns a Scheduler over a new SQLite store, closed
// when the test ends.
func sqliteScheduler(t *testing.T) *scheduler.Scheduler {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "jobs.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s, err := scheduler.New(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCalendarLifecycle writes, reads, lists and deletes calendars in a
// SQLite store, which keeps them in the collection's record.
func TestCalendarLifecycle(t *testing.T) {
	ctx := context.Background()
	s := sqliteScheduler(t)
	if _, err := s.PutCalendar(ctx, "c", "holidays", holidays(), nil); !errors.Is(err, scheduler.ErrNotFound) {
		t.Fatalf("PutCalendar in a missing collection: err = %v, want ErrNotFound", err)
	}
	if _, err := s.PutCollection(ctx, "c", nil, nil); err != nil {
		t.Fatal(err)
	}
	put, err := s.PutCalendar(ctx, "c", "holidays", holidays(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.GetCalendar(ctx, "c", "holidays")
	if err != nil {
		t.Fatal(err)
	}
	if !put.Created {
		t.Error("PutCalendar of a new calendar: Created = false, want true")
	}
	want := *put
	want.Created = false // a read creates nothing
	if diff := cmp.Diff(&want, got); diff != "" {
		t.Errorf("GetCalendar differs from what PutCalendar returned (-want +got):\n%s", diff)
	}
	// Replacing the collection keeps its calendars.
	if _, err := s.PutCollection(ctx, "c", &scheduler.JobCollection{Location: "west"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PatchCollection(ctx, "c", []byte(`{"properties": {"state": "Enabled"}}`), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetCalendar(ctx, "c", "holidays"); err != nil {
		t.Fatalf("GetCalendar after the collection was replaced and patched: %v", err)
	}
	if _, err := s.PutCalendar(ctx, "c", "holidays", holidays(), &scheduler.PutCalendarOptions{IfMatch: `"stale"`}); !errors.Is(err, scheduler.ErrPreconditionFailed) {
		t.Errorf("PutCalendar with a stale IfMatch: err = %v, want ErrPreconditionFailed", err)
	}
	if _, err := s.PutCalendar(ctx, "c", "freeze", &scheduler.Calendar{}, &scheduler.PutCalendarOptions{IfMatch: put.ETag}); !errors.Is(err, scheduler.ErrPreconditionFailed) {
		t.Errorf("PutCalendar of a new calendar with IfMatch: err = %v, want ErrPreconditionFailed", err)
	}
	again, err := s.PutCalendar(ctx, "c", "holidays", holidays(), &scheduler.PutCalendarOptions{IfMatch: put.ETag})
	if err != nil {
		t.Fatal(err)
	}
	if again.Created {
		t.Error("PutCalendar of an existing calendar: Created = true, want false")
	}
	if again.ETag == put.ETag {
		t.Errorf("a replaced calendar kept its ETag %s", put.ETag)
	}
	if _, err := s.PutCalendar(ctx, "c", "freeze", &scheduler.Calendar{}, nil); err != nil {
		t.Fatal(err)
	}
	list, err := s.ListCalendars(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range list {
		names = append(names, c.Name)
	}
	if diff := cmp.Diff([]string{"freeze", "holidays"}, names); diff != "" {
		t.Errorf("ListCalendars names (-want +got):\n%s", diff)
	}
	if err := s.DeleteCalendar(ctx, "c", "holidays", &scheduler.DeleteCalendarOptions{IfMatch: put.ETag}); !errors.Is(err, scheduler.ErrPreconditionFailed) {
		t.Errorf("DeleteCalendar with a stale IfMatch: err = %v, want ErrPreconditionFailed", err)
	}
	if _, err := s.GetCalendar(ctx, "c", "holidays"); err != nil {
		t.Fatalf("GetCalendar after a DeleteCalendar with a stale IfMatch: %v", err)
	}
	if err := s.DeleteCalendar(ctx, "c", "holidays", &scheduler.DeleteCalendarOptions{IfMatch: again.ETag}); err != nil {
		t.Fatal(err)
	}
	_, err = s.GetCalendar(ctx, "c", "holidays")
	var nf *scheduler.NotFoundError
	if !errors.As(err, &nf) || nf.Calendar != "holidays" {
		t.Errorf("GetCalendar after DeleteCalendar: err = %v, want a NotFoundError naming the calendar", err)
	}
	if err := s.DeleteCalendar(ctx, "c", "holidays", nil); !errors.Is(err, scheduler.ErrNotFound) {
		t.Errorf("DeleteCalendar twice: err = %v, want ErrNotFound", err)
	}
}

// TestDeleteCalendarIfMatchMissing: a deletion with IfMatch of a calendar,
// or in a collection, that does not exist fails the condition
// (ErrPreconditionFailed, REST 412), as a deletion of a job or collection
// does; without IfMatch it is ErrNotFound.
func TestDeleteCalendarIfMatchMissing(t *testing.T) {
	ctx := context.Background()
	s := sqliteScheduler(t)
	if _, err := s.PutCollection(ctx, "c", nil, nil); err != nil {
		t.Fatal(err)
	}
	put, err := s.PutCalendar(ctx, "c", "holidays", holidays(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteCalendar(ctx, "c", "holidays", nil); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, collection, ifMatch string
	}{
		{"deleted calendar, its last ETag", "c", put.ETag},
		{"deleted calendar, *", "c", "*"},
		{"missing collection, an ETag", "nope", put.ETag},
		{"missing collection, *", "nope", "*"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := s.DeleteCalendar(ctx, tt.collection, "holidays", &scheduler.DeleteCalendarOptions{IfMatch: tt.ifMatch})
			if !errors.Is(err, scheduler.ErrPreconditionFailed) || errors.Is(err, scheduler.ErrNotFound) {
				t.Errorf("DeleteCalendar(%q, IfMatch %q) = %v, want ErrPreconditionFailed", tt.collection, tt.ifMatch, err)
			}
			if err := s.DeleteCalendar(ctx, tt.collection, "holidays", nil); !errors.Is(err, scheduler.ErrNotFound) {
				t.Errorf("DeleteCalendar(%q) without IfMatch = %v, want ErrNotFound", tt.collection, err)
			}
		})
	}
}

func TestPutCalendarInvalid(t *testing.T) {
	ctx := context.Background()
	s, err := scheduler.New(memory.New(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutCollection(ctx, "c", nil, nil); err != nil {
		t.Fatal(err)
	}
	_, err = scheduler.ParseCalendar([]byte(`{"properties": {
		"timeZone": "Mars/Olympus",
		"dates": ["2026-12-25", "25.12.2026"],
		"ranges": [{"start": "2026-12-24T12:00:00", "end": "2026-12-24T12:00:00"}, {"start": "2026-12-24", "end": "2026-12-25T00:00:00"}],
		"rules": [{"frequency": "Year", "schedule": {"months": [13], "monthDays": [1]}}, {"frequency": "Day", "count": 3}],
		"colour": "red"
	}}`))
	var paths []string
	for _, e := range scheduler.ValidationErrors(err) {
		paths = append(paths, e.Path)
	}
	want := []string{
		"properties.colour",
		"properties.timeZone",
		"properties.dates[1]",
		"properties.ranges[0].end",
		"properties.ranges[1].start",
		"properties.rules[0].schedule.months[0]",
		"properties.rules[1].count",
	}
	if diff := cmp.Diff(want, paths); diff != "" {
		t.Errorf("ParseCalendar error paths (-want +got):\n%s\n%v", diff, err)
	}
	bad := &scheduler.Calendar{Properties: scheduler.CalendarProperties{Dates: []string{"2026-02-30"}}}
	if _, err := s.PutCalendar(ctx, "c", "bad", bad, nil); !errors.Is(err, scheduler.ErrInvalid) {
		t.Errorf("PutCalendar(2026-02-30): err = %v, want ErrInvalid", err)
	}
	if _, err := s.PutCalendar(ctx, "c", "no good", &scheduler.Calendar{}, nil); !errors.Is(err, scheduler.ErrInvalid) {
		t.Errorf("PutCalendar with a bad name: err = %v, want ErrInvalid", err)
	}
}

// TestPutCalendarRace: of puts of one new calendar that race, exactly one
// creates it; the others replace it (in a SQLite store, whose writes take
// long enough for the puts to overlap).
func TestPutCalendarRace(t *testing.T) {
	ctx := context.Background()
	s := sqliteScheduler(t)
	if _, err := s.PutCollection(ctx, "c", nil, nil); err != nil {
		t.Fatal(err)
	}
	const n = 4
	created := make(chan bool, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			<-start
			r, err := s.PutCalendar(ctx, "c", "holidays", holidays(), nil)
			if errors.Is(err, scheduler.ErrConflict) {
				return // too many racing writes: this one did not happen
			}
			if err != nil {
				t.Error(err)
				return
			}
			created <- r.Created
		})
	}
	close(start)
	wg.Wait()
	close(created)
	count := 0
	for c := range created {
		if c {
			count++
		}
	}
	if count != 1 {
		t.Errorf("%d of %d racing puts of a new calendar created it, want 1", count, n)
	}
}
