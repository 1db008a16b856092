package scheduler_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
)

// TestBackfillFollowsCalendar: a backfill of a job that names an
// exclusion calendar runs the occurrences its schedule runs, where it
// runs them: those the calendar skips are left out, and those it moves
// run at the instant they were moved to, once when two move onto one.
// Its dry run answers the same, and so does a job of the same schedule
// run as it comes due. The business-day job is created after the range
// (synctest starts on Saturday 2000-01-01), from a startTime before it.
func TestBackfillFollowsCalendar(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2000, 1, d, 9, 0, 0, 0, time.UTC) }
	tests := []struct {
		on   string
		want []time.Time
	}{
		// Weekends and 4 January excluded.
		{"Skip", []time.Time{day(3), day(5), day(6), day(7), day(10)}},
		// Sat 1 and Sun 2 move onto Mon 3, Tue 4 onto Wed 5, Sat 8 and
		// Sun 9 onto Mon 10.
		{"NextIncluded", []time.Time{day(3), day(5), day(6), day(7), day(10)}},
		// Sat 1 and Sun 2 move onto Fri 31 December, before the range;
		// Tue 4 onto Mon 3, Sat 8 and Sun 9 onto Fri 7.
		{"PreviousIncluded", []time.Time{day(3), day(5), day(6), day(7), day(10)}},
	}
	for _, tt := range tests {
		t.Run(tt.on, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				e := newEnv(t, scheduler.Config{})
				e.putCalendar("wk", `{"properties": {"rules": [{"frequency": "Week", "schedule": {"weekDays": ["Saturday", "Sunday"]}}], "dates": ["2000-01-04"]}}`)
				def := jobJSON(time.Date(1999, 12, 20, 0, 0, 0, 0, time.UTC),
					`"recurrence": {"frequency": "Day", "schedule": {"hours": [9], "minutes": [0]}, "calendar": "wk", "onExcluded": "`+tt.on+`"}`)
				// The same schedule, run as it comes due: the backfill
				// runs what it ran.
				e.put("live", def)
				e.start()
				time.Sleep(16 * 24 * time.Hour) // Monday 17 January
				synctest.Wait()
				e.stop()
				var live []time.Time
				for _, req := range e.exec.requests() {
					if at := req.ExpectedTime.UTC(); at.Before(time.Date(2000, 1, 11, 0, 0, 0, 0, time.UTC)) {
						live = append(live, at)
					}
				}
				if diff := cmp.Diff(tt.want, live); diff != "" {
					t.Errorf("expected times of the job run as it came due (-want +got):\n%s", diff)
				}
				e.exec.mu.Lock()
				e.exec.calls = nil
				e.exec.mu.Unlock()
				e.s = e.newScheduler()
				e.put("j", def)
				from, to := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2000, 1, 11, 0, 0, 0, 0, time.UTC)
				dry, err := e.s.BackfillJob(ctx, "c", "j", from, to, &scheduler.BackfillOptions{Only: scheduler.BackfillAll, DryRun: true})
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, dry); diff != "" {
					t.Errorf("dry run (-want +got):\n%s", diff)
				}
				got, err := e.s.BackfillJob(ctx, "c", "j", from, to, nil)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("backfill (-want +got):\n%s", diff)
				}
				e.start()
				time.Sleep(time.Hour)
				synctest.Wait()
				e.stop()
				var ran []time.Time
				for _, req := range e.exec.requests() {
					ran = append(ran, req.ExpectedTime.UTC())
				}
				if diff := cmp.Diff(tt.want, ran); diff != "" {
					t.Errorf("expected times of the attempts (-want +got):\n%s", diff)
				}
			})
		})
	}
}
