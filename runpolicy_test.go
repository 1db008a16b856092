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
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/retry"
)

// outageRun puts def as job j (a job every minute from 1m), runs a
// scheduler until 1m30s, stops it for ten minutes, runs another over the
// same store for 70 seconds, and returns the attempt times.
func outageRun(t *testing.T, cfg scheduler.Config, collection *scheduler.JobCollection, extra string) (*env, []time.Duration) {
	e := newEnv(t, cfg)
	if collection != nil {
		if _, err := e.s.PutCollection(context.Background(), "c", collection, nil); err != nil {
			t.Fatal(err)
		}
	}
	e.start()
	def := `"recurrence": {"frequency": "Minute"}`
	if extra != "" {
		def += ", " + extra
	}
	e.put("j", jobJSON(e.t0.Add(time.Minute), def))
	time.Sleep(90 * time.Second)
	synctest.Wait()
	e.stop()
	time.Sleep(10 * time.Minute) // down from 1m30s to 11m30s
	e.s = e.newScheduler()
	e.start()
	time.Sleep(70 * time.Second)
	synctest.Wait()
	e.stop()
	return e, e.exec.times(e.t0)
}

// skips returns the Skipped entries of job name, oldest first.
func (e *env) skips(name string) []scheduler.HistoryEntry {
	var out []scheduler.HistoryEntry
	h := e.history(name)
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Status == scheduler.StatusSkipped {
			out = append(out, h[i])
		}
	}
	return out
}

// skip is what tests compare of a Skipped entry, as offsets from t0.
type skip struct {
	First, Last time.Duration
	Count       int
	At          time.Duration
}

func (e *env) skipRows(name string) []skip {
	var out []skip
	for _, h := range e.skips(name) {
		out = append(out, skip{h.ExpectedExecutionTime.Sub(e.t0), h.LastExpectedTime.Sub(e.t0), h.Skipped, h.StartTime.Sub(e.t0)})
	}
	return out
}

// TestRunPolicyMissed: a job's runPolicy.missed wins over Config.Misfire,
// a collection's runPolicy is the default of its jobs, and every missed
// occurrence that does not run is on record as Skipped, in one entry.
func TestRunPolicyMissed(t *testing.T) {
	m, restart := time.Minute, 11*time.Minute+30*time.Second
	skipPolicy := &scheduler.JobCollection{Properties: scheduler.CollectionProperties{RunPolicy: &scheduler.RunPolicy{Missed: scheduler.MissedSkip}}}
	tests := []struct {
		name       string
		cfg        scheduler.Config
		collection *scheduler.JobCollection
		extra      string
		want       []time.Duration
		skips      []skip
		says       []string // what the Skipped entries' messages say, when set
	}{
		{
			name: "RunOnce by default", want: []time.Duration{m, restart, 12 * m},
			skips: []skip{{3 * m, 11 * m, 9, restart}}, // 2m runs for 2m..11m
		},
		{
			// 11m is 30 seconds late at 11m30s, within Config.MisfireThreshold.
			name: "the job's Skip over Config's RunOnce", extra: `"runPolicy": {"missed": "skip"}`,
			want: []time.Duration{m, restart, 12 * m}, skips: []skip{{2 * m, 10 * m, 9, restart}},
		},
		{
			name: "the job's RunAll over Config's Skip", cfg: scheduler.Config{Misfire: scheduler.MisfireSkip},
			extra: `"runPolicy": {"missed": "RunAll"}`,
			want:  append(append([]time.Duration{m}, repeat(restart, 10)...), 12*m),
		},
		{
			name: "the collection's Skip", collection: skipPolicy,
			want: []time.Duration{m, restart, 12 * m}, skips: []skip{{2 * m, 10 * m, 9, restart}},
		},
		{
			name: "the job's RunAll over the collection's Skip", collection: skipPolicy, extra: `"runPolicy": {"missed": "RunAll"}`,
			want: append(append([]time.Duration{m}, repeat(restart, 10)...), 12*m),
		},
		{
			// 2m..8m are later than 3 minutes when found at 11m30s; 9m, 10m
			// and 11m run one after the other.
			name: "RunAll within a catch-up window", extra: `"runPolicy": {"missed": "RunAll", "catchUpWindow": "PT3M"}`,
			want: []time.Duration{m, restart, restart, restart, 12 * m}, skips: []skip{{2 * m, 8 * m, 7, restart}},
		},
		{
			name: "RunOnce within a catch-up window", extra: `"runPolicy": {"catchUpWindow": "PT3M"}`,
			want: []time.Duration{m, restart, 12 * m}, skips: []skip{{2 * m, 8 * m, 7, restart}, {10 * m, 11 * m, 2, restart}},
		},
		{
			// 2m..8m are later than 3 minutes when found at 11m30s; 9m
			// runs once for 9m, 10m and 11m.
			name: "Skip within a catch-up window", extra: `"runPolicy": {"missed": "Skip", "catchUpWindow": "PT3M"}`,
			want: []time.Duration{m, restart, 12 * m}, skips: []skip{{2 * m, 8 * m, 7, restart}, {10 * m, 11 * m, 2, restart}},
			says: []string{"later than the catch-up window of PT3M", "the job ran once for them, as the occurrence expected at"},
		},
		{
			// The collection's window, the job's missed policy.
			name:       "member by member",
			collection: &scheduler.JobCollection{Properties: scheduler.CollectionProperties{RunPolicy: &scheduler.RunPolicy{Missed: scheduler.MissedSkip, CatchUpWindow: retry.Duration(3 * m)}}},
			extra:      `"runPolicy": {"missed": "RunAll"}`,
			want:       []time.Duration{m, restart, restart, restart, 12 * m}, skips: []skip{{2 * m, 8 * m, 7, restart}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e, got := outageRun(t, tt.cfg, tt.collection, tt.extra)
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("attempt times (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(tt.skips, e.skipRows("j")); diff != "" {
					t.Errorf("Skipped entries (-want +got):\n%s", diff)
				}
				for i, h := range e.skips("j") {
					if i < len(tt.says) && !strings.Contains(h.Message, tt.says[i]) {
						t.Errorf("Skipped entry %d says %q, want it to say %q", i, h.Message, tt.says[i])
					}
					if !strings.Contains(h.Message, "missed") || h.RepeatCount != 0 || h.ActionName != scheduler.MainAction {
						t.Errorf("Skipped entry %+v: want repeat 0, MainAction, a message that says they were missed", h)
					}
				}
			})
		})
	}
}

// blocking is an executor whose first attempt lasts hold, or until its
// context is done; later ones return at once.
type blocking struct {
	fake
	hold time.Duration
}

func (b *blocking) Execute(ctx context.Context, req *action.Request) (*action.Result, error) {
	b.mu.Lock()
	first := len(b.calls) == 0
	b.mu.Unlock()
	res, err := b.fake.Execute(ctx, req)
	if !first {
		return res, err
	}
	select {
	case <-time.After(b.hold):
		return res, err
	case <-ctx.Done():
		return &action.Result{Message: "stopped"}, ctx.Err()
	}
}

// TestRunPolicyOverlap: a job every minute from 1m whose first attempt
// lasts 2m30s (until 3m30s) sees 2m and 3m come due meanwhile.
func TestRunPolicyOverlap(t *testing.T) {
	m, end := time.Minute, 3*time.Minute+30*time.Second
	tests := []struct {
		overlap  string
		want     []time.Duration
		expected []time.Duration // of the attempts
		skips    []skip
	}{
		// 2m waits (Postponed) and runs at 3m30s; 3m is merged into it.
		{"", []time.Duration{m, end, 4 * m, 5 * m}, []time.Duration{m, 2 * m, 4 * m, 5 * m}, []skip{{3 * m, 3 * m, 1, end}}},
		{"Postpone", []time.Duration{m, end, 4 * m, 5 * m}, []time.Duration{m, 2 * m, 4 * m, 5 * m}, []skip{{3 * m, 3 * m, 1, end}}},
		// Both passed over.
		// (The job is leased while it runs: both are found when it ends.)
		{"Skip", []time.Duration{m, 4 * m, 5 * m}, []time.Duration{m, 4 * m, 5 * m}, []skip{{2 * m, 3 * m, 2, end}}},
		// Both run, in order, after the first.
		{"BufferAll", []time.Duration{m, end, end, 4 * m, 5 * m}, []time.Duration{m, 2 * m, 3 * m, 4 * m, 5 * m}, nil},
		// The first is cancelled at 2m, when 2m starts.
		{"CancelRunning", []time.Duration{m, 2 * m, 3 * m, 4 * m, 5 * m}, []time.Duration{m, 2 * m, 3 * m, 4 * m, 5 * m}, nil},
		// Each starts on time, beside the ones in progress.
		{"AllowAll", []time.Duration{m, 2 * m, 3 * m, 4 * m, 5 * m}, []time.Duration{m, 2 * m, 3 * m, 4 * m, 5 * m}, nil},
	}
	for _, tt := range tests {
		t.Run("overlap="+tt.overlap, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, scheduler.Config{ActionTimeout: time.Hour})
				b := &blocking{hold: 150 * time.Second}
				reg := new(action.Registry)
				reg.Register(action.HTTP, b)
				e.cfg.Executors = reg
				e.s = e.newScheduler()
				e.start()
				defer e.stop()
				policy := ""
				if tt.overlap != "" {
					policy = `, "runPolicy": {"overlap": "` + tt.overlap + `"}`
				}
				e.put("j", jobJSON(e.t0.Add(time.Minute), `"recurrence": {"frequency": "Minute", "count": 5}`+policy))
				time.Sleep(5*time.Minute + 30*time.Second)
				synctest.Wait()
				if diff := cmp.Diff(tt.want, b.times(e.t0)); diff != "" {
					t.Errorf("attempt times (-want +got):\n%s", diff)
				}
				var expected []time.Duration
				for _, r := range b.requests() {
					expected = append(expected, r.ExpectedTime.Sub(e.t0))
				}
				if diff := cmp.Diff(tt.expected, expected); diff != "" {
					t.Errorf("expected times of the attempts (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(tt.skips, e.skipRows("j")); diff != "" {
					t.Errorf("Skipped entries (-want +got):\n%s", diff)
				}
				if tt.overlap == "CancelRunning" {
					var first *scheduler.HistoryEntry
					for _, h := range e.history("j") {
						if h.RepeatCount == 1 {
							first = &h
						}
					}
					if first == nil || first.Status != scheduler.StatusFailed || first.Faulted || !first.EndTime.Equal(e.t0.Add(2*m)) ||
						!strings.Contains(first.Message, "came due (runPolicy.overlap CancelRunning)") {
						t.Errorf("first occurrence's entry = %+v; want Failed, not faulted, at 2m, saying the next came due", first)
					}
				}
				if r := e.job("j"); r.Status.FaultedCount != 0 {
					t.Errorf("job with %d faulted occurrences, want none", r.Status.FaultedCount)
				}
			})
		})
	}
}

// TestPauseAfterFaults: after three consecutive faulted occurrences the
// job is Disabled with a reason; a success in between starts the count
// over; enabling it again starts it over too.
func TestPauseAfterFaults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnv(t, scheduler.Config{})
		// Attempts 1, 2 fail, 3 succeeds, 4, 5, 6 fail.
		e.exec.fn = func(req *action.Request, n int) error {
			if n == 2 {
				return nil
			}
			return errors.New("boom")
		}
		e.start()
		defer e.stop()
		e.put("j", `{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}, "retryPolicy": {"retryType": "None"}},
			"startTime": "`+e.t0.Add(time.Minute).Format(time.RFC3339)+`", "recurrence": {"frequency": "Minute"}, "runPolicy": {"pauseAfterFaults": 3}}`)
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		m := time.Minute
		if diff := cmp.Diff([]time.Duration{m, 2 * m, 3 * m, 4 * m, 5 * m, 6 * m}, e.exec.times(e.t0)); diff != "" {
			t.Errorf("attempt times (-want +got):\n%s", diff)
		}
		r, err := e.s.GetJob(ctx, "c", "j")
		if err != nil {
			t.Fatal(err)
		}
		def := r.Definition()
		if r.State != scheduler.JobDisabled || !strings.Contains(def.StateReason, "after 3 consecutive faulted occurrences") || def.ResumeTime != nil {
			t.Fatalf("job %s, stateReason %q; want Disabled with a reason that says why", r.State, def.StateReason)
		}
		enabled := time.Now()
		if _, err := e.s.EnableJob(ctx, "c", "j"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(90 * time.Second) // one more fault: not paused again yet
		synctest.Wait()
		// Without a reason; the instant it was enabled again stays until
		// its next success.
		want := &scheduler.PolicyState{Resumed: enabled}
		if r := e.job("j"); r.State != scheduler.JobEnabled || !cmp.Equal(want, r.Schedule.Policy) {
			t.Errorf("after enabling and one fault: %s %+v, want Enabled without a reason (%+v)", r.State, r.Schedule.Policy, want)
		}
	})
}

// TestResumeTime: a job put Disabled with a reason and a resume time does
// not run until then, shows both meanwhile, and is Enabled again at that
// instant, handling what it missed by its run policy.
func TestResumeTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnv(t, scheduler.Config{})
		e.start()
		defer e.stop()
		resume := e.t0.Add(5*time.Minute + 30*time.Second)
		e.put("j", jobJSON(e.t0.Add(time.Minute), `"recurrence": {"frequency": "Minute"}, "state": "Disabled",
			"stateReason": "rate limit until 5m30s", "resumeTime": "`+resume.Format(time.RFC3339)+`"`))
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		r, err := e.s.GetJob(ctx, "c", "j")
		if err != nil {
			t.Fatal(err)
		}
		def := r.Definition()
		if r.State != scheduler.JobDisabled || def.StateReason != "rate limit until 5m30s" || def.ResumeTime == nil || !def.ResumeTime.Equal(resume) {
			t.Errorf("paused job: %s %q %v; want Disabled with its reason and resume time", r.State, def.StateReason, def.ResumeTime)
		}
		if r.Job.StateReason != "" || r.Job.ResumeTime != nil {
			t.Errorf("the stored definition keeps %q %v; want them on the record only", r.Job.StateReason, r.Job.ResumeTime)
		}
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		m := time.Minute
		// At 5m30s it runs once for 1m..5m (RunOnce), then at 6m and 7m.
		if diff := cmp.Diff([]time.Duration{5*m + 30*time.Second, 6 * m, 7 * m}, e.exec.times(e.t0)); diff != "" {
			t.Errorf("attempt times (-want +got):\n%s", diff)
		}
		r, _ = e.s.GetJob(ctx, "c", "j")
		if def := r.Definition(); r.State != scheduler.JobEnabled || def.StateReason != "" || def.ResumeTime != nil {
			t.Errorf("resumed job: %s %q %v; want Enabled without reason or resume time", r.State, def.StateReason, def.ResumeTime)
		}
		if diff := cmp.Diff([]skip{{2 * m, 5 * m, 4, 5*m + 30*time.Second}}, e.skipRows("j")); diff != "" {
			t.Errorf("Skipped entries (-want +got):\n%s", diff)
		}
	})
}

// TestResumeTimeSkip: under the Skip missed policy a job paused until
// 5m30s runs at that instant the occurrence of 5m, found 30 seconds late,
// within Config.MisfireThreshold; 1m..4m are passed over.
func TestResumeTimeSkip(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{Misfire: scheduler.MisfireSkip})
		e.start()
		defer e.stop()
		resume := e.t0.Add(5*time.Minute + 30*time.Second)
		e.put("j", jobJSON(e.t0.Add(time.Minute), `"recurrence": {"frequency": "Minute"}, "state": "Disabled",
			"stateReason": "rate limit until 5m30s", "resumeTime": "`+resume.Format(time.RFC3339)+`"`))
		time.Sleep(7 * time.Minute)
		synctest.Wait()
		m := time.Minute
		if diff := cmp.Diff([]time.Duration{5*m + 30*time.Second, 6 * m, 7 * m}, e.exec.times(e.t0)); diff != "" {
			t.Errorf("attempt times (-want +got):\n%s", diff)
		}
		var expected []time.Duration
		for _, r := range e.exec.requests() {
			expected = append(expected, r.ExpectedTime.Sub(e.t0))
		}
		if diff := cmp.Diff([]time.Duration{5 * m, 6 * m, 7 * m}, expected); diff != "" {
			t.Errorf("expected times of the attempts (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]skip{{m, 4 * m, 4, 5*m + 30*time.Second}}, e.skipRows("j")); diff != "" {
			t.Errorf("Skipped entries (-want +got):\n%s", diff)
		}
	})
}

// TestPatchEnableDropsPause: a patch that enables a paused job drops its
// reason and resume time; one that changes something else keeps them.
func TestPatchEnableDropsPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnv(t, scheduler.Config{})
		resume := e.t0.Add(time.Hour).Format(time.RFC3339)
		e.put("j", jobJSON(e.t0.Add(time.Minute), `"state": "Disabled", "stateReason": "why", "resumeTime": "`+resume+`"`))
		r, err := e.s.PatchJob(ctx, "c", "j", []byte(`{"action": {"request": {"body": "new"}}}`), nil)
		if err != nil {
			t.Fatal(err)
		}
		if def := r.Definition(); def.StateReason != "why" || def.ResumeTime == nil {
			t.Errorf("after patching the body: %q %v; want the pause kept", def.StateReason, def.ResumeTime)
		}
		r, err = e.s.PatchJob(ctx, "c", "j", []byte(`{"state": "enabled"}`), nil)
		if err != nil {
			t.Fatal(err)
		}
		if def := r.Definition(); r.State != scheduler.JobEnabled || def.StateReason != "" || def.ResumeTime != nil {
			t.Errorf("after enabling: %s %q %v; want Enabled without the pause", r.State, def.StateReason, def.ResumeTime)
		}
		_, err = e.s.PatchJob(ctx, "c", "j", []byte(`{"stateReason": "no state"}`), nil)
		if ve := scheduler.ValidationErrors(err); len(ve) != 1 || ve[0].Path != "stateReason" {
			t.Errorf("a reason on an Enabled job: %v; want one error at stateReason", err)
		}
	})
}

// TestCollectionRunPolicyRules: a collection's runPolicy is checked with
// the job's rules, at its path under properties, and survives a round
// trip through ParseCollection and the store.
func TestCollectionRunPolicyRules(t *testing.T) {
	_, err := scheduler.ParseCollection([]byte(`{"properties": {"runPolicy": {"missed": "Never", "overlap": "Together", "catchUpWindow": "PT0S", "pauseAfterFaults": 1001}}}`))
	var got []string
	for _, e := range scheduler.ValidationErrors(err) {
		got = append(got, e.Path)
	}
	want := []string{"properties.runPolicy.catchUpWindow", "properties.runPolicy.missed", "properties.runPolicy.overlap", "properties.runPolicy.pauseAfterFaults"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems' paths (-want +got):\n%s\nerror: %v", diff, err)
	}
	c, err := scheduler.ParseCollection([]byte(`{"properties": {"runPolicy": {"missed": "skip", "catchUpWindow": "PT15M", "overlap": "cancelrunning", "pauseAfterFaults": 2}}}`))
	if err != nil {
		t.Fatal(err)
	}
	wantPolicy := &scheduler.RunPolicy{Missed: scheduler.MissedSkip, CatchUpWindow: retry.Duration(15 * time.Minute), Overlap: scheduler.OverlapCancelRunning, PauseAfterFaults: 2}
	if diff := cmp.Diff(wantPolicy, c.Properties.RunPolicy); diff != "" {
		t.Errorf("parsed runPolicy (-want +got):\n%s", diff)
	}
	e := newEnv(t, scheduler.Config{})
	r, err := e.s.PutCollection(context.Background(), "p", c, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.Properties.RunPolicy.Missed = scheduler.MissedRunAll // the caller's, not the store's
	got2, err := e.s.GetCollection(context.Background(), "p")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantPolicy, got2.Definition.Properties.RunPolicy); diff != "" || r.Definition.Properties.RunPolicy == nil {
		t.Errorf("stored runPolicy (-want +got):\n%s", diff)
	}
}

// TestEnableRecordsPassedOccurrences: enabling a Disabled job starts it
// from now; the occurrences it passed over while Disabled are on record as
// one Skipped entry.
func TestEnableRecordsPassedOccurrences(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnv(t, scheduler.Config{})
		e.start()
		defer e.stop()
		e.put("j", jobJSON(e.t0.Add(time.Minute), `"recurrence": {"frequency": "Minute"}`))
		if _, err := e.s.DisableJob(ctx, "c", "j"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5*time.Minute + 30*time.Second)
		if _, err := e.s.EnableJob(ctx, "c", "j"); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		m := time.Minute
		if diff := cmp.Diff([]skip{{m, 5 * m, 5, 5*m + 30*time.Second}}, e.skipRows("j")); diff != "" {
			t.Errorf("Skipped entries (-want +got):\n%s", diff)
		}
		// The entry recorded (no Passed left); the instant the job was
		// enabled again stays until its next success.
		want := &scheduler.PolicyState{Resumed: e.t0.Add(5*m + 30*time.Second)}
		if r := e.job("j"); !cmp.Equal(want, r.Schedule.Policy) || !r.Status.NextExecutionTime.Equal(e.t0.Add(6*m)) {
			t.Errorf("after enabling: policy state %+v, next %v; want %+v (the entry recorded) and the next run at 6m", r.Schedule.Policy, r.Status.NextExecutionTime, want)
		}
		if n := len(e.exec.times(e.t0)); n != 0 {
			t.Errorf("%d attempts, want none before 6m", n)
		}
	})
}
