package scheduler_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
)

// putCalendarJSON parses a calendar and puts it into collection c.
func (e *env) putCalendar(name, def string) {
	e.t.Helper()
	c, err := scheduler.ParseCalendar([]byte(def))
	if err != nil {
		e.t.Fatalf("ParseCalendar: %v", err)
	}
	if _, err := e.s.PutCalendar(context.Background(), "c", name, c, nil); err != nil {
		e.t.Fatalf("PutCalendar(%s): %v", name, err)
	}
}

// TestCalendarThroughEngine runs jobs that name an exclusion calendar:
// Skip passes an excluded occurrence over with a Skipped entry naming the
// calendar, NextIncluded and PreviousIncluded move it to the next or
// previous day the calendar does not exclude (run once when that is
// another occurrence's instant), and "the last business day of the
// month" is monthDays [-1] with PreviousIncluded. The test starts at
// 2000-01-01T00:00Z, synctest's epoch.
func TestCalendarThroughEngine(t *testing.T) {
	day := 24 * time.Hour
	holiday := `{"properties": {"dates": ["2000-01-04"]}}`
	weekends := `{"properties": {"rules": [{"frequency": "Week", "schedule": {"weekDays": ["Saturday", "Sunday"]}}]}}`
	every2 := func(on string) string {
		return `"recurrence": {"frequency": "Day", "interval": 2, "calendar": "cal"` + on + `}`
	}
	tests := []struct {
		name, calendar, recurrence string
		run                        time.Duration
		wantExpected               []time.Duration // of the attempts, from t0
		wantSkips                  []skip
	}{
		{"Skip by default", holiday, every2(""), 6 * day,
			[]time.Duration{1 * day, 5 * day}, []skip{{3 * day, 3 * day, 1, 1 * day}}},
		{"Skip", holiday, every2(`, "onExcluded": "skip"`), 6 * day,
			[]time.Duration{1 * day, 5 * day}, []skip{{3 * day, 3 * day, 1, 1 * day}}},
		// The entry is written at the take of the occurrence before the
		// skipped one; there is none before the first occurrence.
		{"Skip of the first occurrence leaves no entry", `{"properties": {"dates": ["2000-01-02"]}}`,
			`"recurrence": {"frequency": "Day", "calendar": "cal"}`, 2*day + time.Hour,
			[]time.Duration{2 * day}, nil},
		{"NextIncluded", holiday, every2(`, "onExcluded": "NextIncluded"`), 6 * day,
			[]time.Duration{1 * day, 4 * day, 5 * day}, nil},
		{"PreviousIncluded", holiday, every2(`, "onExcluded": "PreviousIncluded"`), 6 * day,
			[]time.Duration{1 * day, 2 * day, 5 * day}, nil},
		{"NextIncluded onto the next occurrence runs once", holiday,
			`"recurrence": {"frequency": "Day", "calendar": "cal", "onExcluded": "NextIncluded"}`, 4*day + time.Hour,
			[]time.Duration{1 * day, 2 * day, 4 * day}, nil},
		// 2000-01-31 is a Monday, 2000-04-30 a Sunday: the job runs on
		// Friday 28 April.
		{"last business day of the month", weekends,
			`"recurrence": {"frequency": "Month", "schedule": {"monthDays": [-1], "hours": [0], "minutes": [0]}, "calendar": "cal", "onExcluded": "PreviousIncluded"}`,
			122 * day, []time.Duration{30 * day, 59 * day, 90 * day, 118 * day}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, scheduler.Config{})
				e.putCalendar("cal", tt.calendar)
				e.start()
				e.put("j", jobJSON(e.t0.Add(day), tt.recurrence))
				time.Sleep(tt.run)
				synctest.Wait()
				e.stop()
				var got []time.Duration
				for _, h := range e.hist { // as recorded: the store's history ages out
					if h.Status == scheduler.StatusCompleted {
						got = append(got, h.ExpectedExecutionTime.Sub(e.t0))
					}
				}
				if diff := cmp.Diff(tt.wantExpected, got); diff != "" {
					t.Errorf("expected times of the attempts (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(tt.wantExpected, e.exec.times(e.t0)); diff != "" {
					t.Errorf("attempt times (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(tt.wantSkips, e.skipRows("j")); diff != "" {
					t.Errorf("Skipped entries (-want +got):\n%s", diff)
				}
				for _, h := range e.skips("j") {
					if !strings.Contains(h.Message, `excluded by calendar "cal"`) {
						t.Errorf("Skipped entry %q does not name the calendar", h.Message)
					}
				}
			})
		})
	}
}

// TestCalendarChecks: a job that names a calendar its collection does not
// have is refused at recurrence.calendar, and so is one the calendar
// leaves no occurrence; a calendar in use cannot be deleted (the error
// names the jobs) nor replaced by one that leaves a job no occurrence.
func TestCalendarChecks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnv(t, scheduler.Config{})
		parse := func(def string) *scheduler.Job {
			job, err := scheduler.ParseJob([]byte(jobJSON(e.t0.Add(time.Hour), def)), nil)
			if err != nil {
				t.Fatal(err)
			}
			return job
		}
		daily := parse(`"recurrence": {"frequency": "Day", "calendar": "cal"}`)
		_, err := e.s.PutJob(ctx, "c", "j", daily, nil)
		var ve *scheduler.ValidationError
		if !errors.As(err, &ve) || ve.Path != "recurrence.calendar" {
			t.Fatalf("PutJob naming a missing calendar: err = %v, want a ValidationError at recurrence.calendar", err)
		}
		e.putCalendar("cal", `{"properties": {"ranges": [{"start": "1999-01-01T00:00:00", "end": "2010-01-01T00:00:00"}]}}`)
		_, err = e.s.PutJob(ctx, "c", "j", daily, nil)
		if !errors.As(err, &ve) || ve.Path != "recurrence.calendar" || !strings.Contains(ve.Reason, "no occurrence") {
			t.Fatalf("PutJob of a job the calendar leaves no occurrence: err = %v, want a ValidationError at recurrence.calendar", err)
		}
		e.putCalendar("cal", `{"properties": {"dates": ["2000-01-02"]}}`)
		for _, name := range []string{"b", "a"} {
			if _, err := e.s.PutJob(ctx, "c", name, daily, nil); err != nil {
				t.Fatal(err)
			}
		}
		err = e.s.DeleteCalendar(ctx, "c", "cal", nil)
		var inUse *scheduler.CalendarInUseError
		if !errors.Is(err, scheduler.ErrCalendarInUse) || !errors.As(err, &inUse) {
			t.Fatalf("DeleteCalendar in use: err = %v, want a CalendarInUseError", err)
		}
		if diff := cmp.Diff([]string{"a", "b"}, inUse.Jobs); diff != "" {
			t.Errorf("CalendarInUseError.Jobs (-want +got):\n%s", diff)
		}
		everything, err := scheduler.ParseCalendar([]byte(`{"properties": {"rules": [{"frequency": "Day"}]}}`))
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.s.PutCalendar(ctx, "c", "cal", everything, nil)
		if !errors.As(err, &ve) || ve.Path != "properties" || !strings.Contains(ve.Reason, `jobs "a", "b"`) {
			t.Fatalf("PutCalendar leaving jobs no occurrence: err = %v, want a ValidationError at properties naming a and b", err)
		}
		if err := e.s.DeleteJob(ctx, "c", "a", nil); err != nil {
			t.Fatal(err)
		}
		if err := e.s.DeleteJob(ctx, "c", "b", nil); err != nil {
			t.Fatal(err)
		}
		if err := e.s.DeleteCalendar(ctx, "c", "cal", nil); err != nil {
			t.Errorf("DeleteCalendar no job uses: %v", err)
		}
	})
}

// TestCalendarChangeReachesOtherInstance: a calendar replaced through one
// Scheduler changes the occurrences of the job that names it on another
// Scheduler over the same SQLite store, from the occurrence after the one
// already planned, within policy cache's bound (5 s).
func TestCalendarChangeReachesOtherInstance(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		day := 24 * time.Hour
		t0 := time.Now()
		st, exec, newScheduler := sqliteInstances(t, time.Hour)
		writer, runner := newScheduler("writer"), newScheduler("runner")
		if _, err := writer.PutCollection(ctx, "c", nil, nil); err != nil {
			t.Fatal(err)
		}
		calendar := func(def string) *scheduler.Calendar { return calendarOf(t, def) }
		if _, err := writer.PutCalendar(ctx, "c", "cal", calendar(`{"properties": {"dates": ["2000-02-01"]}}`), nil); err != nil {
			t.Fatal(err)
		}
		job, err := scheduler.ParseJob([]byte(jobJSON(t0.Add(day), `"recurrence": {"frequency": "Day", "calendar": "cal"}`)), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := writer.PutJob(ctx, "c", "j", job, nil); err != nil {
			t.Fatal(err)
		}
		if err := runner.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer runner.Stop(ctx)
		time.Sleep(day + 12*time.Hour) // the runner ran 2000-01-02 and planned 2000-01-03
		if _, err := writer.PutCalendar(ctx, "c", "cal", calendar(`{"properties": {"dates": ["2000-01-04", "2000-01-05"]}}`), nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(4*day + time.Hour)
		synctest.Wait()
		if diff := cmp.Diff([]time.Duration{day, 2 * day, 5 * day}, exec.times(t0)); diff != "" {
			t.Errorf("attempts of the runner (-want +got):\n%s", diff)
		}
		h, err := st.ListHistory(ctx, "c", "j", scheduler.HistoryFilter{Status: scheduler.StatusSkipped})
		if err != nil {
			t.Fatal(err)
		}
		if len(h) != 1 || h[0].Skipped != 2 || !strings.Contains(h[0].Message, `calendar "cal"`) {
			t.Errorf("Skipped entries %+v, want one of 2 occurrences naming the calendar", h)
		}
	})
}

// storedICal is an iCalendar text that a version before the refusal of
// rules without an occurrence stored: a holiday on 4 January, and events
// on 6 and 8 January whose RRULE never occurs (30 February; a BYSETPOS
// that selects nothing, which only the probe finds).
const storedICal = "BEGIN:VCALENDAR\r\n" +
	"BEGIN:VEVENT\r\nDTSTART;VALUE=DATE:20000104\r\nEND:VEVENT\r\n" +
	"BEGIN:VEVENT\r\nDTSTART;VALUE=DATE:20000106\r\nRRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30\r\nEND:VEVENT\r\n" +
	"BEGIN:VEVENT\r\nDTSTART;VALUE=DATE:20000108\r\nRRULE:FREQ=MONTHLY;BYDAY=MO;BYMONTHDAY=1,2;BYSETPOS=3\r\nEND:VEVENT\r\n" +
	"END:VCALENDAR\r\n"

// A calendar stored by a version that accepted an iCalendar rule without
// an occurrence (written here into the store, past the checks of a
// write) still excludes its events for a job that names it: each such
// rule adds nothing, and its event keeps its DTSTART, as that version
// read it. A put of the same calendar is refused at properties.ical.
func TestCalendarStoredWithEmptyRule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		day := 24 * time.Hour
		e := newEnv(t, scheduler.Config{})
		ctx := context.Background()
		cal := scheduler.Calendar{Properties: scheduler.CalendarProperties{ICal: storedICal}}
		col, err := e.store.GetCollection(ctx, "c")
		if err != nil {
			t.Fatal(err)
		}
		col.Definition.Calendars = map[string]*scheduler.CalendarEntry{"cal": {ETag: "stored", Calendar: cal}}
		if err := e.store.PutCollection(ctx, col); err != nil {
			t.Fatal(err)
		}
		e.start()
		e.put("j", jobJSON(e.t0.Add(day), `"recurrence": {"frequency": "Day", "calendar": "cal"}`))
		time.Sleep(9*day + time.Hour)
		synctest.Wait()
		e.stop()
		want := []time.Duration{1 * day, 2 * day, 4 * day, 6 * day, 8 * day, 9 * day} // 4, 6 and 8 January excluded
		if diff := cmp.Diff(want, e.exec.times(e.t0)); diff != "" {
			t.Errorf("attempt times under the stored calendar (-want +got):\n%s", diff)
		}

		_, err = e.s.PutCalendar(ctx, "c", "other", &cal, nil)
		var ve *scheduler.ValidationError
		if !errors.Is(err, scheduler.ErrInvalid) || !errors.As(err, &ve) || ve.Path != "properties.ical" ||
			!strings.Contains(err.Error(), "line 7: RRULE") || !strings.Contains(err.Error(), "line 11: RRULE") {
			t.Errorf("PutCalendar of the stored calendar: %v, want ErrInvalid at properties.ical naming lines 7 and 11", err)
		}
	})
}
