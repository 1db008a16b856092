package scheduler_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/recurrence"
)

// TestParseJobCron checks the canonical form of a job whose recurrence is a
// cron spec: the spec, with the recurrence it stands for, which parses back
// to an equal job and runs at the spec's instants.
func TestParseJobCron(t *testing.T) {
	data, err := os.ReadFile("testdata/cron-job.json")
	if err != nil {
		t.Fatal(err)
	}
	j, err := scheduler.ParseJob(data, nil)
	if err != nil {
		t.Fatalf("ParseJob: %v", err)
	}
	out, err := json.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"startTime":"2026-01-05T00:00:00Z","action":{"type":"Https","request":{"uri":"https://example.com/poll","method":"POST","body":"poll"}},` +
		`"recurrence":{"cron":"CRON_TZ=Europe/Berlin */15 9-16 * * 1-5","frequency":"Week","count":100,"timeZone":"Europe/Berlin",` +
		`"schedule":{"minutes":[0,15,30,45],"hours":[9,10,11,12,13,14,15,16],"weekDays":["Monday","Tuesday","Wednesday","Thursday","Friday"]}}}`
	if string(out) != want {
		t.Errorf("Marshal(ParseJob) =\n%s\nwant\n%s", out, want)
	}
	back, err := scheduler.ParseJob(out, nil)
	if err != nil {
		t.Fatalf("ParseJob(canonical form): %v", err)
	}
	if diff := cmp.Diff(j, back); diff != "" {
		t.Errorf("canonical form parses to another job (-first +second):\n%s", diff)
	}
	timing, err := j.Timing("reports", "nightly", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	var got []time.Time
	for at := range timing.Occurrences() {
		got = append(got, at)
		if len(got) == 3 {
			break
		}
	}
	wantTimes := []time.Time{date("2026-01-05T08:00:00Z"), date("2026-01-05T08:15:00Z"), date("2026-01-05T08:30:00Z")}
	if !cmp.Equal(wantTimes, got, cmp.Comparer(time.Time.Equal)) {
		t.Errorf("first occurrences = %v, want %v (09:00 Berlin is 08:00Z in January)", got, wantTimes)
	}
}

// TestJobValidateCron checks that a job built in Go with only a cron spec
// validates and that Validate leaves it as it was.
func TestJobValidateCron(t *testing.T) {
	j := scheduler.Job{
		Action:     action.Action{Type: action.HTTPS, Request: &action.HTTPRequest{URI: "https://example.com/", Method: "GET"}},
		Recurrence: &recurrence.Recurrence{Cron: "*/15 * * * *"},
	}
	if err := j.Validate(nil); err != nil {
		t.Errorf("Validate(cron-only job) = %v", err)
	}
	if j.Recurrence.Frequency != "" || j.Recurrence.Schedule != nil {
		t.Errorf("Validate modified the recurrence: %+v", j.Recurrence)
	}
	j.Recurrence = &recurrence.Recurrence{Cron: "*/15 * * * *", Frequency: recurrence.Minute}
	wantErrs(t, j.Validate(nil), `recurrence.frequency: "Minute" differs from the cron spec, which gives Hour`)
}

// TestPutJobCron checks that a job put from Go with only a cron spec is
// stored with the recurrence it stands for, without changing the caller's
// definition, and that PATCH replaces the spec's fields with a new spec's.
func TestPutJobCron(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnv(t, scheduler.Config{})
		def := &scheduler.Job{
			Action:     action.Action{Type: action.HTTP, Request: &action.HTTPRequest{URI: "http://127.0.0.1:9/hello", Method: "POST"}},
			Recurrence: &recurrence.Recurrence{Cron: "0 9 * * 1-5", TimeZone: "Europe/Berlin"},
		}
		r, err := e.s.PutJob(ctx, "c", "j", def, nil)
		if err != nil {
			t.Fatalf("PutJob: %v", err)
		}
		want := &recurrence.Recurrence{Cron: "0 9 * * 1-5", Frequency: recurrence.Week, TimeZone: "Europe/Berlin",
			Schedule: &recurrence.Schedule{Minutes: []int{0}, Hours: []int{9},
				WeekDays: []recurrence.Weekday{recurrence.Monday, recurrence.Tuesday, recurrence.Wednesday, recurrence.Thursday, recurrence.Friday}}}
		if diff := cmp.Diff(want, r.Job.Recurrence); diff != "" {
			t.Errorf("stored recurrence (-want +got):\n%s", diff)
		}
		if def.Recurrence.Frequency != "" {
			t.Errorf("PutJob changed the caller's recurrence: %+v", def.Recurrence)
		}

		// A new spec replaces the old one's fields; the zone given
		// without a prefix stays.
		p, err := e.s.PatchJob(ctx, "c", "j", []byte(`{"recurrence": {"cron": "30 6 1 * *"}}`), nil)
		if err != nil {
			t.Fatalf("PatchJob(new spec): %v", err)
		}
		want = &recurrence.Recurrence{Cron: "30 6 1 * *", Frequency: recurrence.Month, TimeZone: "Europe/Berlin",
			Schedule: &recurrence.Schedule{Minutes: []int{30}, Hours: []int{6}, MonthDays: []int{1}}}
		if diff := cmp.Diff(want, p.Job.Recurrence); diff != "" {
			t.Errorf("recurrence after PATCH of the spec (-want +got):\n%s", diff)
		}

		// A spec with a zone prefix replaces the zone too.
		p, err = e.s.PatchJob(ctx, "c", "j", []byte(`{"Recurrence": {"Cron": "CRON_TZ=Asia/Tokyo @daily", "count": 5}}`), nil)
		if err != nil {
			t.Fatalf("PatchJob(spec with a zone): %v", err)
		}
		want = &recurrence.Recurrence{Cron: "CRON_TZ=Asia/Tokyo @daily", Frequency: recurrence.Day, Count: 5, TimeZone: "Asia/Tokyo",
			Schedule: &recurrence.Schedule{Minutes: []int{0}, Hours: []int{0}}}
		if diff := cmp.Diff(want, p.Job.Recurrence); diff != "" {
			t.Errorf("recurrence after PATCH of a spec with a zone (-want +got):\n%s", diff)
		}

		// Changing a field the spec stands for conflicts with it.
		_, err = e.s.PatchJob(ctx, "c", "j", []byte(`{"recurrence": {"schedule": {"hours": [7]}}}`), nil)
		wantErrs(t, err, "recurrence.schedule.hours: [7] differs from the cron spec, which gives [0]")

		// Dropping the spec keeps the recurrence it stood for.
		p, err = e.s.PatchJob(ctx, "c", "j", []byte(`{"recurrence": {"cron": null}}`), nil)
		if err != nil {
			t.Fatalf("PatchJob(cron null): %v", err)
		}
		want.Cron = ""
		if diff := cmp.Diff(want, p.Job.Recurrence); diff != "" {
			t.Errorf("recurrence after PATCH cron null (-want +got):\n%s", diff)
		}

		// A spec on a plain recurrence replaces its fields as well.
		p, err = e.s.PatchJob(ctx, "c", "j", []byte(`{"recurrence": {"cron": "0 */6 * * *"}}`), nil)
		if err != nil {
			t.Fatalf("PatchJob(spec on a plain recurrence): %v", err)
		}
		want = &recurrence.Recurrence{Cron: "0 */6 * * *", Frequency: recurrence.Day, Count: 5, TimeZone: "Asia/Tokyo",
			Schedule: &recurrence.Schedule{Minutes: []int{0}, Hours: []int{0, 6, 12, 18}}}
		if diff := cmp.Diff(want, p.Job.Recurrence); diff != "" {
			t.Errorf("recurrence after PATCH of a spec on a plain recurrence (-want +got):\n%s", diff)
		}
	})
}

// TestEngineRunsCronAcrossClockChange runs a job whose spec names a wall
// time that does not exist on the day clocks spring forward in Berlin
// (2000-03-26, 02:00 CET becomes 03:00 CEST): the engine runs it once that
// day, shifted by the gap, and at 02:30 on the days around it.
func TestEngineRunsCronAcrossClockChange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{})
		// Put the job close to the change, so that retention does not
		// remove it once it completes.
		time.Sleep(time.Until(date("2000-03-23T00:00:00Z")))
		e.put("dst", jobJSON(date("2000-03-24T00:00:00Z"), `"recurrence": {"cron": "CRON_TZ=Europe/Berlin 30 2 * * *", "count": 4}`))
		e.start()
		defer e.stop()
		time.Sleep(time.Until(date("2000-03-29T00:00:00Z")))
		synctest.Wait()
		var got []time.Time
		for _, h := range e.history("dst") { // newest first
			got = append([]time.Time{h.ExpectedExecutionTime}, got...)
		}
		want := []time.Time{
			date("2000-03-24T01:30:00Z"), // 02:30 CET
			date("2000-03-25T01:30:00Z"),
			date("2000-03-26T01:30:00Z"), // 02:30 does not exist: 03:30 CEST
			date("2000-03-27T00:30:00Z"), // 02:30 CEST
		}
		if !cmp.Equal(want, got, cmp.Comparer(time.Time.Equal)) {
			t.Errorf("expected execution times = %v, want %v", got, want)
		}
		if r := e.job("dst"); r.State != scheduler.JobCompleted {
			t.Errorf("state = %s after count 4, want Completed", r.State)
		}
	})
}
