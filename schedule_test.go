package scheduler_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/recurrence"
	"github.com/jobclock/scheduler/store/memory"
)

// TestSchedule: Schedule creates the default collection and the job,
// leaves an unchanged job alone, replaces a changed one and keeps a
// disabled one disabled.
func TestSchedule(t *testing.T) {
	ctx := context.Background()
	reg := new(action.Registry)
	d := newDigests(reg)
	s, err := scheduler.New(memory.New(), &scheduler.Config{Executors: reg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	first, err := s.Schedule(ctx, "digest", recurrence.Daily(7, 0), d.h.Action(Digest{To: "a"}))
	if err != nil {
		t.Fatalf("Schedule: %v", err)
	}
	if first.Collection != scheduler.DefaultCollection || first.Version != 1 || first.State != scheduler.JobEnabled {
		t.Errorf("Schedule = %s/%s version %d %s; want a new Enabled job in %s", first.Collection, first.Name, first.Version, first.State, scheduler.DefaultCollection)
	}
	col, err := s.GetCollection(ctx, scheduler.DefaultCollection)
	if err != nil || col.Definition.MaxJobCount() != scheduler.StandardMaxJobCount {
		t.Errorf("default collection = %+v, %v; want the Standard plan", col, err)
	}

	again, err := s.Schedule(ctx, "digest", recurrence.Daily(7, 0), d.h.Action(Digest{To: "a"}))
	if err != nil || again.ETag != first.ETag || again.Version != first.Version {
		t.Errorf("Schedule of the same job = %+v, %v; want it left alone (ETag %s, version %d)", again, err, first.ETag, first.Version)
	}

	changed, err := s.Schedule(ctx, "digest", recurrence.Daily(8, 0), d.h.Action(Digest{To: "a"}))
	if err != nil || changed.ETag == first.ETag || changed.Job.Recurrence.Schedule.Hours[0] != 8 {
		t.Errorf("Schedule of a changed job = %+v, %v; want it replaced", changed, err)
	}
	if _, err := s.DisableJob(ctx, scheduler.DefaultCollection, "digest"); err != nil {
		t.Fatal(err)
	}
	for _, hour := range []int{8, 9} {
		r, err := s.Schedule(ctx, "digest", recurrence.Daily(hour, 0), d.h.Action(Digest{To: "a"}))
		if err != nil || r.State != scheduler.JobDisabled || r.Job.Recurrence.Schedule.Hours[0] != hour {
			t.Errorf("Schedule at %d:00 of a disabled job = %+v, %v; want it Disabled with the new recurrence", hour, r, err)
		}
	}

	_, err = s.Schedule(ctx, "bad", recurrence.Daily(24, 0), action.Action{Type: "Digest", Custom: []byte(`{"to": 1}`)})
	want := []string{"action.custom.to: 1 is not a string", "recurrence.schedule.hours[0]: 24 is not an hour (0-23)"}
	if diff := cmp.Diff(want, paths(err)); diff != "" {
		t.Errorf("Schedule of a bad job: errors (-want +got):\n%s", diff)
	}
	_, err = s.Schedule(ctx, "unknown", nil, action.Action{Type: "Nope"})
	if got := paths(err); len(got) != 1 || got[0][:len(`action.type: "Nope" is not an action type`)] != `action.type: "Nope" is not an action type` {
		t.Errorf("Schedule of an unregistered type = %v", err)
	}
	if _, err := s.Schedule(ctx, "bad name/", nil, d.h.Action(Digest{})); !errors.Is(err, scheduler.ErrInvalid) {
		t.Errorf("Schedule with a bad name = %v, want ErrInvalid", err)
	}
}

// TestScheduleKeepsItsPlace: a program that schedules its job at every
// start picks up where it left off: the occurrence missed while it was
// down runs once (the default misfire policy), with its expected time, the
// other one is on record as Skipped, and the job stays on its grid,
// numbered on from before; a one-time job does not run again.
func TestScheduleKeepsItsPlace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		st := memory.New()
		t0 := time.Now()
		run := func(d time.Duration) *digests {
			reg := new(action.Registry)
			dg := newDigests(reg)
			s, err := scheduler.New(st, &scheduler.Config{Executors: reg, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Schedule(ctx, "tick", recurrence.Every(10, recurrence.Minute), dg.h.Action(Digest{To: "tick"})); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Schedule(ctx, "once", nil, dg.h.Action(Digest{To: "once"})); err != nil {
				t.Fatal(err)
			}
			if err := s.Start(ctx); err != nil {
				t.Fatal(err)
			}
			time.Sleep(d)
			synctest.Wait()
			if err := s.Stop(ctx); err != nil {
				t.Fatal(err)
			}
			return dg
		}
		run(25 * time.Minute)           // runs at 0, 10, 20
		time.Sleep(20 * time.Minute)    // down from 25 to 45: misses 30 and 40
		second := run(20 * time.Minute) // 45 (for 30), 50, 60
		if diff := cmp.Diff([]Digest{{To: "tick"}, {To: "tick"}, {To: "tick"}}, second.payloads()); diff != "" {
			t.Errorf("second run's attempts (-want +got):\n%s", diff)
		}
		h, err := st.ListHistory(ctx, scheduler.DefaultCollection, "tick", scheduler.HistoryFilter{})
		if err != nil {
			t.Fatal(err)
		}
		type entry struct {
			Repeat          int
			Expected, Start time.Duration
		}
		var got []entry
		for i := len(h) - 1; i >= 0; i-- {
			got = append(got, entry{h[i].RepeatCount, h[i].ExpectedExecutionTime.Sub(t0), h[i].StartTime.Sub(t0)})
		}
		m := time.Minute
		// The run at 45 stands for 30 and 40: 40 is on record as Skipped.
		want := []entry{{1, 0, 0}, {2, 10 * m, 10 * m}, {3, 20 * m, 20 * m}, {0, 40 * m, 45 * m}, {4, 30 * m, 45 * m}, {5, 50 * m, 50 * m}, {6, 60 * m, 60 * m}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("history of tick, oldest first (-want +got):\n%s", diff)
		}
		if h, _ := st.ListHistory(ctx, scheduler.DefaultCollection, "once", scheduler.HistoryFilter{}); len(h) != 1 {
			t.Errorf("the one-time job ran %d times, want once", len(h))
		}
	})
}

// TestScheduleCron: a cron spec is one way to say when. The job runs at
// cron's instants in the spec's zone, and scheduling it again at the next
// start leaves it alone although the stored job holds the expanded
// recurrence as well.
func TestScheduleCron(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		reg := new(action.Registry)
		d := newDigests(reg)
		s, err := scheduler.New(memory.New(), &scheduler.Config{Executors: reg, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		when := recurrence.Cron("CRON_TZ=Europe/Berlin 30 2 * * 1-5")
		first, err := s.Schedule(ctx, "nightly", when, d.h.Action(Digest{To: "a"}))
		if err != nil {
			t.Fatalf("Schedule with a cron spec: %v", err)
		}
		if when.Frequency != "" {
			t.Errorf("Schedule changed the caller's recurrence: %+v", when)
		}
		berlin, _ := time.LoadLocation("Europe/Berlin")
		now := time.Now().In(berlin)
		want := time.Date(now.Year(), now.Month(), now.Day(), 2, 30, 0, 0, berlin)
		for !want.After(now) || want.Weekday() == time.Saturday || want.Weekday() == time.Sunday {
			want = time.Date(want.Year(), want.Month(), want.Day()+1, 2, 30, 0, 0, berlin)
		}
		if n := first.Status.NextExecutionTime; n == nil || !n.Equal(want) {
			t.Errorf("next execution = %v, want %v", n, want)
		}
		again, err := s.Schedule(ctx, "nightly", recurrence.Cron("CRON_TZ=Europe/Berlin 30 2 * * 1-5"), d.h.Action(Digest{To: "a"}))
		if err != nil || again.ETag != first.ETag {
			t.Errorf("Schedule of the same cron job = %v; want it left alone", err)
		}
		_, err = s.Schedule(ctx, "bad", recurrence.Cron("30 24 * * *"), d.h.Action(Digest{To: "a"}))
		if ve := scheduler.ValidationErrors(err); len(ve) != 1 || ve[0].Path != "recurrence.cron" {
			t.Errorf("Schedule with a bad cron spec = %v, want one error at recurrence.cron", err)
		}
	})
}
