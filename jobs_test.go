package scheduler_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/recurrence"
	"github.com/jobclock/scheduler/store/memory"
)

// wantValidation checks that err is a validation error for path.
func wantValidation(t *testing.T, what string, err error, path string) {
	t.Helper()
	if !errors.Is(err, scheduler.ErrInvalid) {
		t.Errorf("%s: error %v, want one matching ErrInvalid", what, err)
		return
	}
	for _, v := range scheduler.ValidationErrors(err) {
		if v.Path == path {
			return
		}
	}
	t.Errorf("%s: error %v does not name %q", what, err, path)
}

func TestBadInput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnv(t, scheduler.Config{})
		job := func() *scheduler.Job {
			j, err := scheduler.ParseJob([]byte(jobJSON(time.Time{}, "")), nil)
			if err != nil {
				t.Fatal(err)
			}
			return j
		}
		_, err := e.s.PutJob(ctx, "c", "1bad", job(), nil)
		wantValidation(t, "PutJob(name starting with a digit)", err, "job")
		_, err = e.s.PutJob(ctx, "c", strings.Repeat("a", 101), job(), nil)
		wantValidation(t, "PutJob(101-character name)", err, "job")
		_, err = e.s.PutJob(ctx, "bad name", "j", job(), nil)
		wantValidation(t, "PutJob(collection with a space)", err, "collection")
		_, err = e.s.PutJob(ctx, "c", "j", nil, nil)
		wantValidation(t, "PutJob(nil job)", err, "job")
		bad := job()
		bad.Action.Request.URI = "http://127.0.0.1/" + strings.Repeat("x", 2100)
		_, err = e.s.PutJob(ctx, "c", "j", bad, nil)
		wantValidation(t, "PutJob(URI over 2,048 characters)", err, "action.request.uri")
		big := job()
		big.Action.Request.Body = strings.Repeat("x", 8000)
		big.Action.Request.Headers = map[string]string{}
		for i := range 40 {
			big.Action.Request.Headers["X-H"+strings.Repeat("h", i)] = strings.Repeat("v", 200)
		}
		_, err = e.s.PutJob(ctx, "c", "j", big, nil)
		wantValidation(t, "PutJob(definition over 16,000 bytes)", err, "job")
		_, err = e.s.PutJob(ctx, "missing", "j", job(), nil)
		if !errors.Is(err, scheduler.ErrNotFound) || !strings.Contains(err.Error(), `"missing"`) {
			t.Errorf("PutJob(missing collection): %v, want ErrNotFound naming the collection", err)
		}
		_, err = e.s.ListJobs(ctx, "c", &scheduler.ListJobsOptions{Top: 101})
		wantValidation(t, "ListJobs(top 101)", err, "top")
		_, err = e.s.ListJobs(ctx, "c", &scheduler.ListJobsOptions{Skip: -1})
		wantValidation(t, "ListJobs(skip -1)", err, "skip")
		_, err = e.s.ListJobs(ctx, "c", &scheduler.ListJobsOptions{State: "Sleeping"})
		wantValidation(t, "ListJobs(state Sleeping)", err, "state")
		_, err = e.s.ListHistory(ctx, "c", "j", &scheduler.ListHistoryOptions{Faulted: true, NotFaulted: true})
		wantValidation(t, "ListHistory(faulted and not faulted)", err, "notFaulted")
		_, err = e.s.ListHistory(ctx, "c", "j", &scheduler.ListHistoryOptions{Status: "Weird"})
		wantValidation(t, "ListHistory(status Weird)", err, "status")
		for _, st := range []scheduler.ExecutionStatus{scheduler.StatusCompleted, scheduler.StatusFailed, scheduler.StatusPostponed, scheduler.StatusSkipped} {
			if !strings.Contains(err.Error(), string(st)) {
				t.Errorf("ListHistory(status Weird) = %q, want it to name the status %s", err, st)
			}
			if _, err := e.s.ListHistory(ctx, "c", "j", &scheduler.ListHistoryOptions{Status: st}); errors.Is(err, scheduler.ErrInvalid) {
				t.Errorf("ListHistory(status %s): %v, want a valid status", st, err)
			}
		}
		_, err = e.s.PutCollection(ctx, "x", &scheduler.JobCollection{Properties: scheduler.CollectionProperties{
			SKU: &scheduler.SKU{Name: "Gold"}, State: "Deleted",
			Quota: &scheduler.Quota{MaxJobCount: -1, MaxRecurrence: &scheduler.MaxRecurrence{Frequency: "Fortnight"}}}}, nil)
		for _, p := range []string{"properties.sku.name", "properties.state", "properties.quota.maxJobCount", "properties.quota.maxRecurrence.frequency"} {
			wantValidation(t, "PutCollection(bad properties)", err, p)
		}
		_, err = scheduler.ParseCollection([]byte(`{"properties": {"skew": {}}}`))
		if err == nil || !strings.Contains(err.Error(), "skew") {
			t.Errorf("ParseCollection(unknown field): %v, want an error naming skew", err)
		}
		_, err = e.s.GetJob(ctx, "c", "nope")
		if !errors.Is(err, scheduler.ErrNotFound) {
			t.Errorf("GetJob(missing): %v, want ErrNotFound", err)
		}
		if err := e.s.DeleteCollection(ctx, "nope", nil); !errors.Is(err, scheduler.ErrNotFound) {
			t.Errorf("DeleteCollection(missing): %v, want ErrNotFound", err)
		}
	})
}

func TestConfigErrors(t *testing.T) {
	_, err := scheduler.New(nil, nil)
	if err == nil {
		t.Errorf("New(nil store) succeeded")
	}
	tests := []struct {
		cfg   scheduler.Config
		field string
	}{
		{scheduler.Config{MaxConcurrency: -1}, "MaxConcurrency"},
		{scheduler.Config{Misfire: "sometimes"}, "Misfire"},
		{scheduler.Config{LeaseDuration: time.Millisecond}, "LeaseDuration"},
		{scheduler.Config{HistoryPerJob: -5}, "HistoryPerJob"},
		{scheduler.Config{InstanceID: "  "}, "InstanceID"},
		{scheduler.Config{FiringWindow: scheduler.DefaultClaimAhead + time.Millisecond}, "FiringWindow"},
		{scheduler.Config{ClaimAhead: 10 * time.Millisecond, FiringWindow: 20 * time.Millisecond}, "FiringWindow"},
	}
	for _, tt := range tests {
		_, err := scheduler.New(memory.New(), &tt.cfg)
		var ce *scheduler.ConfigError
		if !errors.As(err, &ce) || ce.Field != tt.field {
			t.Errorf("New(%+v) = %v, want a *ConfigError for %s", tt.cfg, err, tt.field)
		}
	}
	d := (*scheduler.Config)(nil).WithDefaults()
	if d.MaxConcurrency != scheduler.DefaultMaxConcurrency || d.ActionTimeout != 60*time.Second || d.MinRetryInterval != 15*time.Second ||
		d.HistoryPerJob != 1000 || d.HistoryRetention != 60*24*time.Hour || d.Misfire != scheduler.MisfireRunOnce || d.Logger == nil || d.InstanceID == "" {
		t.Errorf("WithDefaults() = %+v", d)
	}
}

// TestFiringWindowDefaults: a zero Config.FiringWindow means
// DefaultFiringWindow, or ClaimAhead when that is shorter (so that a short
// ClaimAhead alone stays valid); a window as long as ClaimAhead, a negative
// one, and any window without claiming ahead are valid.
func TestFiringWindowDefaults(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  scheduler.Config
		want time.Duration
	}{
		{name: "zero", want: scheduler.DefaultFiringWindow},
		{name: "short ClaimAhead", cfg: scheduler.Config{ClaimAhead: time.Millisecond}, want: time.Millisecond},
		{name: "no ClaimAhead", cfg: scheduler.Config{ClaimAhead: scheduler.NoClaimAhead}, want: scheduler.DefaultFiringWindow},
		{name: "as long as ClaimAhead", cfg: scheduler.Config{FiringWindow: scheduler.DefaultClaimAhead}, want: scheduler.DefaultClaimAhead},
		{name: "none", cfg: scheduler.Config{FiringWindow: scheduler.NoFiringWindow}, want: scheduler.NoFiringWindow},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.cfg.WithDefaults().FiringWindow; got != tt.want {
				t.Errorf("WithDefaults().FiringWindow = %v, want %v", got, tt.want)
			}
			if _, err := scheduler.New(memory.New(), &tt.cfg); err != nil {
				t.Errorf("New(%+v): %v", tt.cfg, err)
			}
		})
	}
}

func TestQuotas(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnv(t, scheduler.Config{})
		free := &scheduler.JobCollection{Properties: scheduler.CollectionProperties{SKU: &scheduler.SKU{Name: scheduler.SKUFree}}}
		if _, err := e.s.PutCollection(ctx, "free", free, nil); err != nil {
			t.Fatal(err)
		}
		put := func(coll, name, def string) error {
			j, err := scheduler.ParseJob([]byte(def), nil)
			if err != nil {
				t.Fatal(err)
			}
			_, err = e.s.PutJob(ctx, coll, name, j, nil)
			return err
		}
		wantQuota := func(what string, err error, quota string) {
			t.Helper()
			var qe *scheduler.QuotaError
			if !errors.Is(err, scheduler.ErrQuotaExceeded) || !errors.As(err, &qe) || qe.Quota != quota {
				t.Errorf("%s: %v, want a %s quota error", what, err, quota)
			}
		}
		hourly := jobJSON(time.Time{}, `"recurrence": {"frequency": "Hour"}`)
		wantQuota("every minute in a Free collection", put("free", "m", jobJSON(time.Time{}, `"recurrence": {"frequency": "Minute", "interval": 30}`)), "maxRecurrence")
		wantQuota("every 15 minutes by schedule in a Free collection",
			put("free", "s", jobJSON(time.Time{}, `"recurrence": {"frequency": "Day", "schedule": {"minutes": [0, 15, 30, 45]}}`)), "maxRecurrence")
		if err := put("free", "twice", jobJSON(time.Time{}, `"recurrence": {"frequency": "Day", "schedule": {"hours": [9, 17], "minutes": [0]}}`)); err != nil {
			t.Errorf("twice a day in a Free collection: %v", err)
		}
		if err := put("free", "monthly", jobJSON(time.Time{}, `"recurrence": {"frequency": "Month", "schedule": {"monthDays": [1]}}`)); err != nil {
			t.Errorf("monthly in a Free collection: %v", err)
		}
		if err := put("free", "once", jobJSON(time.Time{}, "")); err != nil {
			t.Errorf("one-shot job in a Free collection: %v", err)
		}
		for _, n := range []string{"h1", "h2"} {
			if err := put("free", n, hourly); err != nil {
				t.Fatalf("job %s: %v", n, err)
			}
		}
		wantQuota("sixth job in a Free collection", put("free", "h3", hourly), "maxJobCount")
		// Upgrading lifts the limit; an explicit quota overrides the plan.
		upgraded, err := e.s.PatchCollection(ctx, "free", []byte(`{"properties": {"sku": {"name": "standard"}, "quota": {"maxJobCount": 6}}}`), nil)
		if err != nil || upgraded.Definition.Plan() != scheduler.SKUStandard || upgraded.Definition.MaxJobCount() != 6 {
			t.Fatalf("PatchCollection(upgrade) = %+v, %v", upgraded, err)
		}
		if err := put("free", "h3", hourly); err != nil {
			t.Errorf("sixth job after raising maxJobCount to 6: %v", err)
		}
		wantQuota("seventh job with maxJobCount 6", put("free", "h4", hourly), "maxJobCount")
		_, err = e.s.PatchCollection(ctx, "free", []byte(`{"properties": {"quota": {"maxJobCount": 2}}}`), nil)
		wantQuota("lowering maxJobCount below the job count", err, "maxJobCount")
		if err := put("free", "fast", jobJSON(time.Time{}, `"recurrence": {"frequency": "Minute"}`)); err != nil && !errors.Is(err, scheduler.ErrQuotaExceeded) {
			t.Fatal(err)
		}
		_, err = e.s.PatchCollection(ctx, "free", []byte(`{"properties": {"quota": {"maxJobCount": 100, "maxRecurrence": {"frequency": "Week", "interval": 1}}}}`), nil)
		wantQuota("a weekly maxRecurrence while daily jobs exist", err, "maxRecurrence")
		c, _ := e.s.GetCollection(ctx, "free")
		if c.Definition.MaxRecurrence() != (scheduler.MaxRecurrence{Frequency: recurrence.Minute, Interval: 1}) {
			t.Errorf("maxRecurrence after the refused patch = %v, want the Standard plan's 1 Minute", c.Definition.MaxRecurrence())
		}
	})
}

func TestETagsAndPatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnv(t, scheduler.Config{})
		r := e.put("j", jobJSON(e.t0.Add(time.Hour), `"recurrence": {"frequency": "Hour"}`))
		if r.Version != 1 || r.ETag == "" || r.State != scheduler.JobEnabled {
			t.Errorf("created job: version %d etag %q state %s; want 1, an ETag, Enabled", r.Version, r.ETag, r.State)
		}
		_, err := e.s.PatchJob(ctx, "c", "j", []byte(`{"state": "disabled"}`), &scheduler.PatchJobOptions{IfMatch: "stale"})
		if !errors.Is(err, scheduler.ErrPreconditionFailed) || !errors.Is(err, scheduler.ErrConflict) {
			t.Errorf("PatchJob(stale IfMatch): %v, want ErrPreconditionFailed (and ErrConflict)", err)
		}
		p, err := e.s.PatchJob(ctx, "c", "j", []byte(`{
			// comments are fine
			"recurrence": {"interval": 2},
			"action": {"request": {"headers": {"X-A": "1"}}},
		}`), &scheduler.PatchJobOptions{IfMatch: r.ETag})
		if err != nil {
			t.Fatalf("PatchJob: %v", err)
		}
		d := p.Definition()
		if p.ETag == r.ETag || d.Recurrence.Interval != 2 || d.Recurrence.Frequency != recurrence.Hour ||
			d.Action.Request.Headers["X-A"] != "1" || d.Action.Request.Body != "hi" || d.Action.Request.URI != "http://127.0.0.1:9/hello" {
			t.Errorf("patched definition = %+v %+v; want interval 2, Hour, header added, body and URI kept, new ETag", d.Recurrence, d.Action.Request)
		}
		p2, err := e.s.PatchJob(ctx, "c", "j", []byte(`{"properties": {"recurrence": null}}`), nil)
		if err != nil || p2.Job.Recurrence != nil {
			t.Errorf("PatchJob(recurrence null) = %+v, %v; want the recurrence removed", p2, err)
		}
		_, err = e.s.PatchJob(ctx, "c", "j", []byte(`{"status": {"executionCount": 5}}`), nil)
		wantValidation(t, "PatchJob(status)", err, "status")
		_, err = e.s.PatchJob(ctx, "c", "j", []byte(`{"state": "Completed"}`), nil)
		wantValidation(t, "PatchJob(state Completed)", err, "state")
		_, err = e.s.PatchJob(ctx, "c", "j", []byte(`{"recurrence": {"frequency": "Fortnight"}}`), nil)
		wantValidation(t, "PatchJob(bad frequency)", err, "recurrence.frequency")
		_, err = e.s.PutJob(ctx, "c", "j", p.Job, &scheduler.PutJobOptions{IfMatch: r.ETag})
		if !errors.Is(err, scheduler.ErrPreconditionFailed) {
			t.Errorf("PutJob(stale IfMatch): %v, want ErrPreconditionFailed", err)
		}
		_, err = e.s.PutJob(ctx, "c", "new", p.Job, &scheduler.PutJobOptions{IfMatch: "x"})
		if !errors.Is(err, scheduler.ErrPreconditionFailed) {
			t.Errorf("PutJob(IfMatch on a missing job): %v, want ErrPreconditionFailed", err)
		}
		cur, _ := e.s.GetJob(ctx, "c", "j")
		rep, err := e.s.PutJob(ctx, "c", "j", p2.Job, &scheduler.PutJobOptions{IfMatch: cur.ETag})
		if err != nil || rep.Version <= 1 || !rep.Created.Equal(r.Created) {
			t.Errorf("PutJob(replace) = %+v, %v; want version > 1 and the original creation time", rep, err)
		}
		// Run it once, then it is Completed and cannot be patched.
		e.start()
		defer e.stop()
		time.Sleep(2 * time.Hour)
		synctest.Wait()
		if r := e.job("j"); r.State != scheduler.JobCompleted {
			t.Fatalf("state = %s, want Completed", r.State)
		}
		_, err = e.s.PatchJob(ctx, "c", "j", []byte(`{"state": "Enabled"}`), nil)
		if !errors.Is(err, scheduler.ErrFinalState) {
			t.Errorf("PatchJob(Completed job): %v, want ErrFinalState", err)
		}
		if _, err := e.s.DisableJob(ctx, "c", "j"); !errors.Is(err, scheduler.ErrFinalState) {
			t.Errorf("DisableJob(Completed job): %v, want ErrFinalState", err)
		}
		if err := e.s.DeleteJob(ctx, "c", "j", nil); err != nil {
			t.Errorf("DeleteJob(Completed job): %v", err)
		}
	})
}

func TestListJobsAndHistoryPaging(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnv(t, scheduler.Config{})
		for _, n := range []string{"b", "a", "c"} {
			e.put(n, jobJSON(e.t0.Add(time.Hour), ""))
		}
		if _, err := e.s.DisableJob(ctx, "c", "b"); err != nil {
			t.Fatal(err)
		}
		page, err := e.s.ListJobs(ctx, "c", &scheduler.ListJobsOptions{Top: 1, Skip: 1})
		if err != nil || len(page) != 1 || page[0].Name != "b" {
			t.Errorf("ListJobs(top 1, skip 1) = %v, %v; want [b]", page, err)
		}
		en, _ := e.s.ListJobs(ctx, "c", &scheduler.ListJobsOptions{State: scheduler.JobEnabled})
		if len(en) != 2 || en[0].Name != "a" || en[1].Name != "c" {
			t.Errorf("ListJobs(Enabled) = %v, want [a c]", en)
		}
	})
}

func TestDeleteCollectionCascades(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnv(t, scheduler.Config{})
		e.start()
		defer e.stop()
		e.put("j", jobJSON(time.Time{}, ""))
		synctest.Wait()
		if err := e.s.DeleteCollection(ctx, "c", nil); err != nil {
			t.Fatal(err)
		}
		if _, err := e.s.GetJob(ctx, "c", "j"); !errors.Is(err, scheduler.ErrNotFound) {
			t.Errorf("GetJob after DeleteCollection: %v, want ErrNotFound", err)
		}
		if cs, _ := e.s.ListCollections(ctx); len(cs) != 0 {
			t.Errorf("ListCollections = %v, want none", cs)
		}
	})
}

// TestPatchCountsFromCreation: a job without startTime counts its periods
// from its creation, so a patch made months later is checked from there,
// not from the time of the patch.
func TestPatchCountsFromCreation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnv(t, scheduler.Config{})
		// Created in January: every 3 months reaches October.
		quarterly := `{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/q", "method": "GET"}},
			"recurrence": {"frequency": "Month", "interval": 3, "schedule": {"months": [10], "monthDays": [1], "hours": [6], "minutes": [0]}}}`
		if e.t0.Month() != time.January {
			t.Fatalf("the bubble starts in %v; the test needs January", e.t0.Month())
		}
		e.put("q", quarterly)
		time.Sleep(40 * 24 * time.Hour) // February: from here every 3 months never reaches October
		p, err := e.s.PatchJob(ctx, "c", "q", []byte(`{"action": {"request": {"uri": "http://127.0.0.1:9/q2"}}}`), nil)
		if err != nil {
			t.Fatalf("PatchJob in February: %v", err)
		}
		if next := p.Status.NextExecutionTime; next == nil || next.Month() != time.October {
			t.Errorf("next execution after the patch = %v, want in October", next)
		}
		// A new job created now counts from February, and is refused.
		job, err := scheduler.ParseJob([]byte(quarterly), nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.s.PutJob(ctx, "c", "q3", job, nil)
		wantValidation(t, "PutJob in February", err, "recurrence.schedule.months")
	})
}

// TestAnchorAtWholeSecond: a job without startTime counts its occurrences
// from its creation truncated to the whole second, however it is put, and
// keeps that anchor through a patch; Created and Updated are exact.
func TestAnchorAtWholeSecond(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnv(t, scheduler.Config{})
		def := jobJSON(time.Time{}, `"recurrence": {"frequency": "Minute", "interval": 10}`)
		time.Sleep(1750 * time.Millisecond)
		now := time.Now()
		whole := e.t0.Add(time.Second)
		parsed, err := scheduler.ParseJob([]byte(def), nil)
		if err != nil {
			t.Fatal(err)
		}
		put := map[string]func() (*scheduler.JobRecord, error){
			"PutJob":     func() (*scheduler.JobRecord, error) { return e.s.PutJob(ctx, "c", "a", parsed, nil) },
			"PutJobJSON": func() (*scheduler.JobRecord, error) { return e.s.PutJobJSON(ctx, "c", "b", []byte(def), nil) },
			"Schedule": func() (*scheduler.JobRecord, error) {
				return e.s.Schedule(ctx, "d", parsed.Recurrence, parsed.Action)
			},
		}
		for how, f := range put {
			r, err := f()
			if err != nil {
				t.Fatalf("%s: %v", how, err)
			}
			if next := r.Status.NextExecutionTime; next == nil || !next.Equal(whole) {
				t.Errorf("%s: nextExecutionTime = %v, want %v", how, next, whole)
			}
			if !r.Schedule.Anchor.Equal(whole) || !r.Created.Equal(now) || !r.Updated.Equal(now) {
				t.Errorf("%s: anchor %v, created %v, updated %v, want %v, %v, %v", how, r.Schedule.Anchor, r.Created, r.Updated, whole, now, now)
			}
		}
		time.Sleep(25*time.Minute + 300*time.Millisecond)
		p, err := e.s.PatchJob(ctx, "c", "b", []byte(`{"action": {"request": {"uri": "http://127.0.0.1:9/b"}}}`), nil)
		if err != nil {
			t.Fatalf("PatchJob: %v", err)
		}
		if want := whole.Add(30 * time.Minute); p.Status.NextExecutionTime == nil || !p.Status.NextExecutionTime.Equal(want) {
			t.Errorf("PatchJob: nextExecutionTime = %v, want %v", p.Status.NextExecutionTime, want)
		}
		if !p.Schedule.Anchor.Equal(whole) || !p.Created.Equal(now) || !p.Updated.Equal(time.Now()) {
			t.Errorf("PatchJob: anchor %v, created %v, updated %v, want %v, %v, %v", p.Schedule.Anchor, p.Created, p.Updated, whole, now, time.Now())
		}
	})
}

// TestSeconds: Schedule takes a recurrence in seconds as it is (its
// collection allows them) and runs it on time; a Standard collection
// refuses a job that runs seconds apart until its quota allows seconds.
func TestSeconds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnv(t, scheduler.Config{})
		act, err := scheduler.ParseJob([]byte(jobJSON(time.Time{}, "")), nil)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(250 * time.Millisecond)
		e.start()
		defer e.stop()
		if _, err := e.s.Schedule(ctx, "tick", recurrence.Every(2, recurrence.Second), act.Action); err != nil {
			t.Fatalf("Schedule(every 2 seconds): %v", err)
		}
		time.Sleep(5 * time.Second)
		// Anchored at the whole second before it was put: the first
		// occurrence runs at once, the others on time.
		want := []time.Duration{250 * time.Millisecond, 2 * time.Second, 4 * time.Second}
		if got := e.exec.times(e.t0); !slices.Equal(got, want) {
			t.Errorf("attempts at %v, want %v", got, want)
		}
		every10s := &scheduler.Job{Action: act.Action, Recurrence: recurrence.Cron("*/10 * * * * *")}
		_, err = e.s.PutJob(ctx, "c", "s", every10s, nil)
		if !errors.Is(err, scheduler.ErrQuotaExceeded) || !strings.Contains(err.Error(), "10s apart") {
			t.Errorf("PutJob(every 10 seconds) in a Standard collection: %v, want ErrQuotaExceeded, 10s apart", err)
		}
		_, err = e.s.PutCollection(ctx, "c", &scheduler.JobCollection{Properties: scheduler.CollectionProperties{
			Quota: &scheduler.Quota{MaxRecurrence: &scheduler.MaxRecurrence{Frequency: recurrence.Second, Interval: 10}}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.s.PutJob(ctx, "c", "s", every10s, nil); err != nil {
			t.Errorf("PutJob(every 10 seconds) with a quota of 10 seconds: %v", err)
		}
	})
}
