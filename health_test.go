package scheduler_test

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
)

// TestHealth: each job's health, derived on GET and usable as a filter.
func TestHealth(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnv(t, scheduler.Config{})
		b := &blocking{hold: 90 * time.Second}
		reg := new(action.Registry)
		reg.Register(action.HTTP, b)
		reg.Register(action.HTTPS, e.exec)
		e.cfg.Executors = reg
		e.s = e.newScheduler()
		e.exec.fn = failing
		start := e.t0.Add(time.Minute).Format(time.RFC3339)
		noRetry := `"retryPolicy": {"retryType": "None"}`
		// ok runs every minute; failing faults; paused is Disabled from
		// the start; skipping's first attempt outlasts the next
		// occurrence, which it skips; late is due while no scheduler runs.
		e.put("ok", `{"action": {"type": "Https", "request": {"uri": "https://127.0.0.1:9/", "method": "GET"}, `+noRetry+`}, "startTime": "`+start+`", "recurrence": {"frequency": "Minute"}}`)
		e.exec.fn = nil
		e.put("failing", `{"action": {"type": "Https", "request": {"uri": "https://127.0.0.1:9/fail", "method": "GET"}, `+noRetry+`}, "startTime": "`+start+`", "recurrence": {"frequency": "Minute", "count": 1}}`)
		e.put("paused", `{"action": {"type": "Https", "request": {"uri": "https://127.0.0.1:9/", "method": "GET"}}, "startTime": "`+start+`", "recurrence": {"frequency": "Minute"}, "state": "Disabled"}`)
		e.put("skipping", `{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}}, "startTime": "`+start+`", "recurrence": {"frequency": "Minute"}, "runPolicy": {"overlap": "Skip"}}`)
		e.put("late", `{"action": {"type": "Https", "request": {"uri": "https://127.0.0.1:9/", "method": "GET"}}, "startTime": "`+start+`"}`)
		e.exec.fn = func(req *action.Request, n int) error {
			if req.Action.Request.URI == "https://127.0.0.1:9/fail" {
				return failing(req, n)
			}
			return nil
		}
		want := map[string]scheduler.JobHealth{}
		check := func(when string) {
			t.Helper()
			for name, h := range want {
				r, err := e.s.GetJob(ctx, "c", name)
				if err != nil {
					t.Fatal(err)
				}
				if r.Status.Health != h {
					t.Errorf("%s: %s is %s, want %s", when, name, r.Status.Health, h)
				}
			}
		}
		time.Sleep(3*time.Minute + 30*time.Second) // no scheduler yet
		synctest.Wait()
		want = map[string]scheduler.JobHealth{"ok": scheduler.HealthLate, "late": scheduler.HealthLate, "paused": scheduler.HealthOK}
		check("before any scheduler ran")
		if err := e.s.DeleteJob(ctx, "c", "late", nil); err != nil {
			t.Fatal(err)
		}
		e.start()
		defer e.stop()
		time.Sleep(5 * time.Second) // 3m35s: everything caught up; skipping's first attempt runs until 5m05s
		synctest.Wait()
		// skipping's catch-up attempt has not ended: 1m, 2m and 3m came due
		// without a success.
		want = map[string]scheduler.JobHealth{"ok": scheduler.HealthOK, "failing": scheduler.HealthFailing, "paused": scheduler.HealthOK, "skipping": scheduler.HealthStale}
		check("after catching up")
		time.Sleep(90 * time.Second) // 5m05s: skipping succeeded at 5m00s, and passed over 4m and 5m
		synctest.Wait()
		want["skipping"] = scheduler.HealthSkipped
		check("after a skip")

		list, err := e.s.ListJobs(ctx, "c", &scheduler.ListJobsOptions{Health: scheduler.HealthSkipped})
		if err != nil || len(list) != 1 || list[0].Name != "skipping" {
			t.Errorf("ListJobs(health Skipped) = %v, %v; want skipping", names(list), err)
		}
		list, err = e.s.ListJobs(ctx, "c", &scheduler.ListJobsOptions{Health: scheduler.HealthOK})
		if err != nil || len(list) != 2 || list[0].Name != "ok" || list[1].Name != "paused" {
			t.Errorf("ListJobs(health OK) = %v, %v; want ok, paused", names(list), err)
		}
		counts, err := e.s.HealthCounts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		wantCounts := map[scheduler.JobHealth]int{scheduler.HealthOK: 2, scheduler.HealthFailing: 1, scheduler.HealthSkipped: 1}
		if diff := cmp.Diff(wantCounts, counts); diff != "" {
			t.Errorf("HealthCounts (-want +got):\n%s", diff)
		}
		if _, err := e.s.ListJobs(ctx, "c", &scheduler.ListJobsOptions{Health: "Sick"}); len(scheduler.ValidationErrors(err)) != 1 {
			t.Errorf("ListJobs(health Sick) = %v, want a validation error", err)
		}
	})
}

func names(list []*scheduler.JobRecord) []string {
	var out []string
	for _, r := range list {
		out = append(out, r.Name)
	}
	return out
}

// TestHealthPaused: a job an operator disabled is not Stale however many
// of its periods pass while it is paused: its occurrences do not come
// due. (Once enabled again, its health counts from then: see
// TestHealthEnabledAgain.)
func TestHealthPaused(t *testing.T) {
	putAgainStores(t, func(t *testing.T, st scheduler.Store) {
		e := newPutAgainEnv(t, st)
		ctx := t.Context()
		if _, err := e.s.PutJobJSON(ctx, "c", "j", []byte(`{"action": {"type": "Digest", "custom": {"to": "ops"}}, "recurrence": {"frequency": "Minute"}}`), nil); err != nil {
			t.Fatal(err)
		}
		e.at(90 * time.Second) // ran at 0 and 1m
		if _, err := e.s.DisableJob(ctx, "c", "j"); err != nil {
			t.Fatal(err)
		}
		e.at(10 * time.Minute)
		r, err := e.s.GetJob(ctx, "c", "j")
		if err != nil {
			t.Fatal(err)
		}
		if r.State != scheduler.JobDisabled || r.Status.Health != scheduler.HealthOK {
			t.Errorf("paused for 8 periods: %s, health %s; want Disabled, OK", r.State, r.Status.Health)
		}
		if _, err = e.s.EnableJob(ctx, "c", "j"); err != nil {
			t.Fatal(err)
		}
		e.at(10*time.Minute + 30*time.Second) // ran at 10m
		if r, err = e.s.GetJob(ctx, "c", "j"); err != nil {
			t.Fatal(err)
		}
		if r.Status.Health != scheduler.HealthOK || r.Status.ExecutionCount != 3 {
			t.Errorf("enabled again: health %s, %d executions; want OK, 3", r.Status.Health, r.Status.ExecutionCount)
		}
	})
}

// TestHealthEnabledAgain: a job enabled again after a pause of more than
// HealthStalePeriods of its periods is not Stale while its next
// occurrence is yet to come: its health counts from when it was enabled
// again, until its next success. EnableJob and a PatchJob of the state
// alike.
func TestHealthEnabledAgain(t *testing.T) {
	for _, enable := range []string{"EnableJob", "PatchJob"} {
		t.Run(enable, func(t *testing.T) {
			putAgainStores(t, func(t *testing.T, st scheduler.Store) {
				e := newPutAgainEnv(t, st)
				ctx := t.Context()
				if _, err := e.s.PutJobJSON(ctx, "c", "j", []byte(hourlyJob), nil); err != nil {
					t.Fatal(err)
				}
				e.at(30 * time.Minute) // ran at 0
				if _, err := e.s.DisableJob(ctx, "c", "j"); err != nil {
					t.Fatal(err)
				}
				e.at(5*time.Hour + 30*time.Minute) // 1h to 5h passed while paused
				var err error
				if enable == "EnableJob" {
					_, err = e.s.EnableJob(ctx, "c", "j")
				} else {
					_, err = e.s.PatchJob(ctx, "c", "j", []byte(`{"state": "Enabled"}`), nil)
				}
				if err != nil {
					t.Fatal(err)
				}
				health := func(when string, want scheduler.JobHealth) *scheduler.JobRecord {
					t.Helper()
					r, err := e.s.GetJob(ctx, "c", "j")
					if err != nil {
						t.Fatal(err)
					}
					if r.State != scheduler.JobEnabled || r.Status.Health != want {
						t.Errorf("%s: %s, health %s; want Enabled, %s", when, r.State, r.Status.Health, want)
					}
					return r
				}
				health("just enabled again", scheduler.HealthOK)
				e.at(5*time.Hour + 59*time.Minute)
				health("before its next occurrence", scheduler.HealthOK)
				e.at(6*time.Hour + 30*time.Minute) // ran at 6h
				r := health("after its next success", scheduler.HealthOK)
				if r.Schedule.Policy != nil {
					t.Errorf("after its next success: Policy %+v; want none", r.Schedule.Policy)
				}
				if got, want := e.expected(t, "j"), []time.Duration{0, 6 * time.Hour}; !slices.Equal(got, want) {
					t.Errorf("ran at %v, want %v", got, want)
				}
			})
		})
	}
}

// TestHealthStaleAfterEnabledAgain: a job enabled again counts the
// occurrences that come due from then: a job every minute, Disabled for
// ten minutes and enabled again at 10m30s, whose first attempt (at 11m)
// lasts until 16m under overlap Skip, is not Stale while two occurrences
// came due since, and Stale once 13m, the third, came due without a
// success; Skipped once the attempt succeeded.
func TestHealthStaleAfterEnabledAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnv(t, scheduler.Config{})
		reg := new(action.Registry)
		reg.Register(action.HTTP, &blocking{hold: 5 * time.Minute})
		e.cfg.Executors = reg
		e.s = e.newScheduler()
		e.put("j", `{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}, "timeout": "PT10M"}, "recurrence": {"frequency": "Minute"}, "runPolicy": {"overlap": "Skip"}, "state": "Disabled"}`)
		e.start()
		defer e.stop()
		health := func(when string, want scheduler.JobHealth) {
			t.Helper()
			r, err := e.s.GetJob(ctx, "c", "j")
			if err != nil {
				t.Fatal(err)
			}
			if r.Status.Health != want {
				t.Errorf("%s: health %s, want %s", when, r.Status.Health, want)
			}
		}
		time.Sleep(10*time.Minute + 30*time.Second)
		synctest.Wait()
		if _, err := e.s.EnableJob(ctx, "c", "j"); err != nil {
			t.Fatal(err)
		}
		health("enabled again at 10m30s", scheduler.HealthOK)
		time.Sleep(2 * time.Minute) // 12m30s: 11m runs, 12m came due meanwhile
		synctest.Wait()
		health("at 12m30s", scheduler.HealthOK)
		time.Sleep(time.Minute) // 13m30s: 11m, 12m and 13m came due since 10m30s
		synctest.Wait()
		health("at 13m30s", scheduler.HealthStale)
		time.Sleep(3 * time.Minute) // 16m30s: 11m succeeded at 16m
		synctest.Wait()
		health("at 16m30s", scheduler.HealthSkipped)
	})
}

// TestHealthResumeTime: a job whose resumeTime comes after a pause of more
// than HealthStalePeriods periods, under the Skip missed policy, is not
// Stale while its next occurrence is yet to come.
func TestHealthResumeTime(t *testing.T) {
	putAgainStores(t, func(t *testing.T, st scheduler.Store) {
		e := newPutAgainEnv(t, st)
		ctx := t.Context()
		resume := e.t0.Add(5*time.Hour + 30*time.Minute).Format(time.RFC3339)
		if _, err := e.s.PutJobJSON(ctx, "c", "j", []byte(hourlyJob), nil); err != nil {
			t.Fatal(err)
		}
		e.at(30 * time.Minute) // ran at 0
		if _, err := e.s.PatchJob(ctx, "c", "j", []byte(`{"state": "Disabled", "resumeTime": "`+resume+`"}`), nil); err != nil {
			t.Fatal(err)
		}
		if _, err := e.s.PutCollection(ctx, "c", &scheduler.JobCollection{Properties: scheduler.CollectionProperties{RunPolicy: &scheduler.RunPolicy{Missed: scheduler.MissedSkip}}}, nil); err != nil {
			t.Fatal(err)
		}
		e.at(5*time.Hour + 31*time.Minute)
		r, err := e.s.GetJob(ctx, "c", "j")
		if err != nil {
			t.Fatal(err)
		}
		// Skipped: the missed policy passed over 1h to 5h.
		if r.State != scheduler.JobEnabled || r.Status.Health != scheduler.HealthSkipped {
			t.Errorf("a minute after its resumeTime: %s, health %s; want Enabled, Skipped", r.State, r.Status.Health)
		}
	})
}
