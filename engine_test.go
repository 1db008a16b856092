package scheduler_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/store/memory"
)

// fake is an executor that records its calls and answers with fn.
type fake struct {
	mu    sync.Mutex
	calls []call
	fn    func(req *action.Request, n int) error
}

type call struct {
	at  time.Time
	req action.Request
}

func (f *fake) Execute(ctx context.Context, req *action.Request) (*action.Result, error) {
	f.mu.Lock()
	n := len(f.calls)
	f.calls = append(f.calls, call{time.Now(), *req})
	fn := f.fn
	f.mu.Unlock()
	if fn == nil {
		return &action.Result{Message: "ok"}, nil
	}
	if err := fn(req, n); err != nil {
		return &action.Result{Message: "failed"}, err
	}
	return &action.Result{Message: "ok"}, nil
}

func (f *fake) times(t0 time.Time) []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []time.Duration
	for _, c := range f.calls {
		out = append(out, c.at.Sub(t0))
	}
	return out
}

func (f *fake) requests() []action.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []action.Request
	for _, c := range f.calls {
		out = append(out, c.req)
	}
	return out
}

// env is a scheduler over a memory store with a fake executor for Http.
type env struct {
	t     *testing.T
	store *memory.Store
	exec  *fake
	s     *scheduler.Scheduler
	t0    time.Time
	cfg   scheduler.Config
	mu    sync.Mutex
	hist  []scheduler.HistoryEntry
}

func newEnv(t *testing.T, cfg scheduler.Config) *env {
	t.Helper()
	e := &env{t: t, store: memory.New(), exec: &fake{}, t0: time.Now()}
	reg := &action.Registry{}
	reg.Register(action.HTTP, e.exec)
	reg.Register(action.HTTPS, e.exec)
	cfg.Executors = reg
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	cfg.OnHistory = func(h scheduler.HistoryEntry) {
		e.mu.Lock()
		e.hist = append(e.hist, h)
		e.mu.Unlock()
	}
	if cfg.MinRetryInterval == 0 {
		cfg.MinRetryInterval = time.Second
	}
	e.cfg = cfg
	e.s = e.newScheduler()
	if _, err := e.s.PutCollection(context.Background(), "c", nil, nil); err != nil {
		t.Fatalf("PutCollection: %v", err)
	}
	return e
}

func (e *env) newScheduler() *scheduler.Scheduler {
	s, err := scheduler.New(e.store, &e.cfg)
	if err != nil {
		e.t.Fatalf("New: %v", err)
	}
	return s
}

func (e *env) start() {
	if err := e.s.Start(context.Background()); err != nil {
		e.t.Fatalf("Start: %v", err)
	}
}

func (e *env) stop() {
	if err := e.s.Stop(context.Background()); err != nil {
		e.t.Fatalf("Stop: %v", err)
	}
}

// put parses a job definition and puts it as c/name.
func (e *env) put(name, def string) *scheduler.JobRecord {
	e.t.Helper()
	job, err := scheduler.ParseJob([]byte(def), &scheduler.ParseOptions{MinRetryInterval: time.Second})
	if err != nil {
		e.t.Fatalf("ParseJob: %v", err)
	}
	r, err := e.s.PutJob(context.Background(), "c", name, job, nil)
	if err != nil {
		e.t.Fatalf("PutJob(%s): %v", name, err)
	}
	return r
}

func (e *env) job(name string) *scheduler.JobRecord {
	e.t.Helper()
	r, err := e.store.GetJob(context.Background(), "c", name)
	if err != nil {
		e.t.Fatalf("GetJob(%s): %v", name, err)
	}
	return r
}

func (e *env) history(name string) []scheduler.HistoryEntry {
	e.t.Helper()
	h, err := e.store.ListHistory(context.Background(), "c", name, scheduler.HistoryFilter{})
	if err != nil {
		e.t.Fatalf("ListHistory(%s): %v", name, err)
	}
	return h
}

// row is the part of a history entry that tests compare, with times as
// offsets from the start of the test.
type row struct {
	Action   scheduler.ActionName
	Status   scheduler.ExecutionStatus
	Expected time.Duration
	Start    time.Duration
	Retry    int
	Repeat   int
}

func (e *env) rows(name string) []row {
	var out []row
	for _, h := range e.history(name) {
		out = append(out, row{h.ActionName, h.Status, h.ExpectedExecutionTime.Sub(e.t0), h.StartTime.Sub(e.t0), h.RetryCount, h.RepeatCount})
	}
	return out
}

const hello = `{"type": "Http", "request": {"uri": "http://127.0.0.1:9/hello", "method": "POST", "body": "hi"}`

// jobJSON returns a job that starts at start (zero: none) with the
// members extra, and the action hello unless extra gives one: a member may
// be given once.
func jobJSON(start time.Time, extra string) string {
	var members []string
	if !strings.Contains(extra, `"action"`) {
		members = append(members, `"action": `+hello+`}`)
	}
	if !start.IsZero() {
		members = append(members, `"startTime": "`+start.Format(time.RFC3339)+`"`)
	}
	if extra != "" {
		members = append(members, extra)
	}
	return "{" + strings.Join(members, ", ") + "}"
}

func failing(req *action.Request, n int) error { return errors.New("boom") }

var discard = slog.New(slog.DiscardHandler)

func TestFiresOnTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{})
		e.start()
		defer e.stop()
		e.put("j", jobJSON(e.t0.Add(time.Minute), `"recurrence": {"frequency": "Minute", "interval": 2, "count": 3}`))
		r := e.job("j")
		if r.Status.NextExecutionTime == nil || !r.Status.NextExecutionTime.Equal(e.t0.Add(time.Minute)) {
			t.Errorf("nextExecutionTime = %v, want %v", r.Status.NextExecutionTime, e.t0.Add(time.Minute))
		}
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		want := []time.Duration{time.Minute, 3 * time.Minute, 5 * time.Minute}
		if diff := cmp.Diff(want, e.exec.times(e.t0)); diff != "" {
			t.Errorf("attempt times (-want +got):\n%s", diff)
		}
		r = e.job("j")
		if r.State != scheduler.JobCompleted || r.Status.ExecutionCount != 3 || r.Status.FailureCount != 0 || r.Status.NextExecutionTime != nil {
			t.Errorf("job = state %s, status %+v; want Completed, executionCount 3, no nextExecutionTime", r.State, r.Status)
		}
		wantRows := []row{
			{scheduler.MainAction, scheduler.StatusCompleted, 5 * time.Minute, 5 * time.Minute, 0, 3},
			{scheduler.MainAction, scheduler.StatusCompleted, 3 * time.Minute, 3 * time.Minute, 0, 2},
			{scheduler.MainAction, scheduler.StatusCompleted, time.Minute, time.Minute, 0, 1},
		}
		if diff := cmp.Diff(wantRows, e.rows("j")); diff != "" {
			t.Errorf("history (-want +got):\n%s", diff)
		}
		reqs := e.exec.requests()
		tags := map[string]bool{}
		for i, q := range reqs {
			if q.JobID() != "c/j" || q.CollectionID != "c" || q.Occurrence != i+1 || q.Retry != 0 || q.ErrorAction ||
				!q.ExpectedTime.Equal(e.t0.Add(time.Duration(2*i+1)*time.Minute)) || q.ClientRequestID() == "" || q.ExecutionTag() == "" {
				t.Errorf("request %d = %+v", i, q)
			}
			tags[q.ExecutionTag()] = true
		}
		if len(tags) != 3 {
			t.Errorf("execution tags %v, want 3 distinct", tags)
		}
	})
}

func TestRunsNowWithoutStartTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{})
		e.start()
		defer e.stop()
		e.put("j", jobJSON(time.Time{}, ""))
		synctest.Wait()
		if diff := cmp.Diff([]time.Duration{0}, e.exec.times(e.t0)); diff != "" {
			t.Errorf("attempt times (-want +got):\n%s", diff)
		}
		if r := e.job("j"); r.State != scheduler.JobCompleted {
			t.Errorf("state = %s, want Completed", r.State)
		}
	})
}

func TestRetriesAndErrorAction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{})
		e.exec.fn = func(req *action.Request, n int) error {
			time.Sleep(time.Second) // each attempt takes a second
			if req.ErrorAction {
				return nil
			}
			return errors.New("boom")
		}
		e.start()
		defer e.stop()
		e.put("j", `{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/main", "method": "GET"},
			"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT20S", "retryCount": 2},
			"errorAction": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/error", "method": "POST"}}}}`)
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		// Attempts at 0, 21 (20 s after the first ended at 1), 42; the
		// error action right after the last failure, at 43.
		want := []time.Duration{0, 21 * time.Second, 42 * time.Second, 43 * time.Second}
		if diff := cmp.Diff(want, e.exec.times(e.t0)); diff != "" {
			t.Errorf("attempt times (-want +got):\n%s", diff)
		}
		r := e.job("j")
		if r.State != scheduler.JobFaulted || r.Status.ExecutionCount != 3 || r.Status.FailureCount != 3 || r.Status.FaultedCount != 1 {
			t.Errorf("job = state %s, status %+v; want Faulted, 3 executions, 3 failures, 1 faulted", r.State, r.Status)
		}
		wantRows := []row{
			{scheduler.ErrorAction, scheduler.StatusCompleted, 0, 43 * time.Second, 0, 1},
			{scheduler.MainAction, scheduler.StatusFailed, 0, 42 * time.Second, 2, 1},
			{scheduler.MainAction, scheduler.StatusFailed, 0, 21 * time.Second, 1, 1},
			{scheduler.MainAction, scheduler.StatusFailed, 0, 0, 0, 1},
		}
		if diff := cmp.Diff(wantRows, e.rows("j")); diff != "" {
			t.Errorf("history (-want +got):\n%s", diff)
		}
		reqs := e.exec.requests()
		ids := map[string]bool{}
		for i, q := range reqs {
			if q.ExecutionTag() != reqs[0].ExecutionTag() {
				t.Errorf("attempt %d has execution tag %q, want %q like the first", i, q.ExecutionTag(), reqs[0].ExecutionTag())
			}
			ids[q.ClientRequestID()] = true
		}
		if len(ids) != len(reqs) {
			t.Errorf("client request IDs %v, want one per attempt", ids)
		}
		if !reqs[3].ErrorAction || reqs[3].Action.Request.URI != "http://127.0.0.1:9/error" || reqs[2].Retry != 2 {
			t.Errorf("requests = %+v", reqs)
		}
		h := e.history("j")
		if h[1].Message != "failed: boom" || !h[1].EndTime.Equal(e.t0.Add(43*time.Second)) {
			t.Errorf("last failed attempt: message %q, end %v", h[1].Message, h[1].EndTime.Sub(e.t0))
		}
	})
}

func TestErrorActionUsesMainPolicyAndDefaultPolicy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{})
		e.exec.fn = failing
		e.start()
		defer e.stop()
		// errorAction without retryPolicy: the main action's (1 retry, 10 s).
		e.put("own", `{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"},
			"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT10S", "retryCount": 1},
			"errorAction": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/e", "method": "GET"}}}}`)
		// No retryPolicy at all: Fixed, 4 retries, 30 s apart.
		e.put("dflt", jobJSON(time.Time{}, ""))
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		var own, dflt []row
		for _, r := range e.rows("own") {
			own = append(own, row{Action: r.Action, Start: r.Start, Retry: r.Retry})
		}
		for _, r := range e.rows("dflt") {
			dflt = append(dflt, row{Start: r.Start, Retry: r.Retry})
		}
		wantOwn := []row{
			{Action: scheduler.ErrorAction, Start: 20 * time.Second, Retry: 1},
			{Action: scheduler.ErrorAction, Start: 10 * time.Second, Retry: 0},
			{Action: scheduler.MainAction, Start: 10 * time.Second, Retry: 1},
			{Action: scheduler.MainAction, Start: 0, Retry: 0},
		}
		if diff := cmp.Diff(wantOwn, own); diff != "" {
			t.Errorf("history of own (-want +got):\n%s", diff)
		}
		wantDflt := []row{{Start: 120 * time.Second, Retry: 4}, {Start: 90 * time.Second, Retry: 3}, {Start: 60 * time.Second, Retry: 2}, {Start: 30 * time.Second, Retry: 1}, {Start: 0, Retry: 0}}
		if diff := cmp.Diff(wantDflt, dflt); diff != "" {
			t.Errorf("history of dflt (-want +got):\n%s", diff)
		}
		if r := e.job("dflt"); r.State != scheduler.JobFaulted || r.Status.FaultedCount != 1 || r.Status.ExecutionCount != 5 {
			t.Errorf("dflt = %s %+v, want Faulted, faultedCount 1, executionCount 5", r.State, r.Status)
		}
	})
}

func TestPostponed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{ActionTimeout: 5 * time.Minute})
		e.exec.fn = func(req *action.Request, n int) error {
			if n == 0 {
				time.Sleep(90 * time.Second)
			}
			return nil
		}
		e.start()
		defer e.stop()
		e.put("j", jobJSON(e.t0, `"recurrence": {"frequency": "Minute", "count": 3}`))
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		want := []row{
			{scheduler.MainAction, scheduler.StatusCompleted, 2 * time.Minute, 2 * time.Minute, 0, 3},
			{scheduler.MainAction, scheduler.StatusCompleted, time.Minute, 90 * time.Second, 0, 2},
			{scheduler.MainAction, scheduler.StatusPostponed, time.Minute, time.Minute, 0, 2}, // when it came due
			{scheduler.MainAction, scheduler.StatusCompleted, 0, 0, 0, 1},
		}
		if diff := cmp.Diff(want, e.rows("j")); diff != "" {
			t.Errorf("history (-want +got):\n%s", diff)
		}
		if r := e.job("j"); r.State != scheduler.JobCompleted || r.Status.ExecutionCount != 3 {
			t.Errorf("job = %s %+v, want Completed after 3 executions", r.State, r.Status)
		}
	})
}

func TestPostponedDuringRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{})
		e.exec.fn = func(req *action.Request, n int) error {
			if req.Occurrence == 1 && req.Retry < 2 {
				return errors.New("boom")
			}
			return nil
		}
		e.start()
		defer e.stop()
		// Every minute; retries 40 s apart push the first occurrence to 80 s.
		e.put("j", jobJSON(e.t0, `"recurrence": {"frequency": "Minute", "count": 2},
			"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"},
			"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT40S", "retryCount": 3}}`))
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		want := []row{
			{scheduler.MainAction, scheduler.StatusCompleted, time.Minute, 80 * time.Second, 0, 2},
			{scheduler.MainAction, scheduler.StatusCompleted, 0, 80 * time.Second, 2, 1},
			{scheduler.MainAction, scheduler.StatusPostponed, time.Minute, time.Minute, 0, 2},
			{scheduler.MainAction, scheduler.StatusFailed, 0, 40 * time.Second, 1, 1},
			{scheduler.MainAction, scheduler.StatusFailed, 0, 0, 0, 1},
		}
		if diff := cmp.Diff(want, e.rows("j")); diff != "" {
			t.Errorf("history (-want +got):\n%s", diff)
		}
	})
}

func TestEndTimeAndCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{})
		e.start()
		defer e.stop()
		end := e.t0.Add(3 * time.Minute)
		e.put("end", jobJSON(e.t0.Add(time.Minute), `"recurrence": {"frequency": "Minute", "endTime": "`+end.Format(time.RFC3339)+`"}`))
		e.put("both", jobJSON(e.t0.Add(time.Minute), `"recurrence": {"frequency": "Minute", "count": 2, "endTime": "`+end.Format(time.RFC3339)+`"}`))
		past := e.put("past", jobJSON(e.t0.Add(-time.Hour), `"recurrence": {"frequency": "Minute", "endTime": "`+e.t0.Add(-time.Minute).Format(time.RFC3339)+`"}`))
		if past.State != scheduler.JobCompleted {
			t.Errorf("job with endTime in the past: state %s, want Completed at once", past.State)
		}
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		for name, want := range map[string]int{"end": 3, "both": 2, "past": 0} {
			r := e.job(name)
			if r.State != scheduler.JobCompleted || r.Status.ExecutionCount != want {
				t.Errorf("%s: state %s, executionCount %d; want Completed, %d", name, r.State, r.Status.ExecutionCount, want)
			}
		}
	})
}

func TestFaultedOccurrenceDoesNotEndRecurringJob(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{})
		e.exec.fn = func(req *action.Request, n int) error {
			if req.Occurrence == 1 {
				return errors.New("boom")
			}
			return nil
		}
		e.start()
		defer e.stop()
		e.put("j", jobJSON(e.t0, `"recurrence": {"frequency": "Hour", "count": 2},
			"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}, "retryPolicy": {"retryType": "None"}}`))
		time.Sleep(30 * time.Minute)
		synctest.Wait()
		if r := e.job("j"); r.State != scheduler.JobEnabled || r.Status.FaultedCount != 1 {
			t.Errorf("after a faulted first occurrence: %s %+v, want Enabled, faultedCount 1", r.State, r.Status)
		}
		time.Sleep(time.Hour)
		synctest.Wait()
		if r := e.job("j"); r.State != scheduler.JobCompleted {
			t.Errorf("after a successful last occurrence: %s, want Completed", r.State)
		}
	})
}

func TestPanickingExecutor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{})
		e.exec.fn = func(req *action.Request, n int) error { panic("kaboom") }
		e.start()
		defer e.stop()
		e.put("j", jobJSON(time.Time{}, `"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}, "retryPolicy": {"retryType": "None"}}`))
		synctest.Wait()
		h := e.history("j")
		if len(h) != 1 || h[0].Status != scheduler.StatusFailed || !strings.Contains(h[0].Message, "kaboom") {
			t.Fatalf("history = %+v, want one Failed entry mentioning the panic", h)
		}
		if r := e.job("j"); r.State != scheduler.JobFaulted {
			t.Errorf("state = %s, want Faulted", r.State)
		}
	})
}

func TestActionTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{ActionTimeout: 5 * time.Second})
		e.exec.fn = func(req *action.Request, n int) error {
			time.Sleep(time.Hour) // ignores its context
			return nil
		}
		e.start()
		defer e.stop()
		e.put("j", jobJSON(time.Time{}, `"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}, "retryPolicy": {"retryType": "None"}}`))
		time.Sleep(2 * time.Hour)
		synctest.Wait()
		h := e.history("j")
		if len(h) != 1 || h[0].Status != scheduler.StatusFailed || !strings.Contains(h[0].Message, "timed out") {
			t.Fatalf("history = %+v, want one Failed entry saying it timed out", h)
		}
	})
}

// misfireRun stops a scheduler after the first occurrence of a Minute job,
// leaves it stopped for ten minutes, starts another over the same store,
// and returns the attempt times.
func misfireRun(t *testing.T, policy scheduler.MisfirePolicy) (*env, []time.Duration) {
	e := newEnv(t, scheduler.Config{Misfire: policy})
	e.start()
	e.put("j", jobJSON(e.t0.Add(time.Minute), `"recurrence": {"frequency": "Minute"}`))
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

func TestMisfire(t *testing.T) {
	m := time.Minute
	tests := []struct {
		policy scheduler.MisfirePolicy
		want   []time.Duration
	}{
		// Once at restart (11m30s) for all missed, then on schedule (12m).
		{scheduler.MisfireRunOnce, []time.Duration{m, 11*m + 30*time.Second, 12 * m}},
		{"", []time.Duration{m, 11*m + 30*time.Second, 12 * m}},
		// Missed ones later than Config.MisfireThreshold dropped; 11m,
		// 30 seconds late, runs; next on schedule.
		{scheduler.MisfireSkip, []time.Duration{m, 11*m + 30*time.Second, 12 * m}},
		// All ten missed ones (2m..11m) at restart, then on schedule.
		{scheduler.MisfireRunAll, append(append([]time.Duration{m}, repeat(11*m+30*time.Second, 10)...), 12*m)},
	}
	for _, tt := range tests {
		t.Run(string(tt.policy), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e, got := misfireRun(t, tt.policy)
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("attempt times (-want +got):\n%s", diff)
				}
				if tt.policy != scheduler.MisfireSkip {
					// The late run carries the expected time of the first missed occurrence.
					h, _ := e.store.ListHistory(context.Background(), "c", "j", scheduler.HistoryFilter{Status: scheduler.StatusCompleted})
					if len(h) < 2 || !h[len(h)-2].ExpectedExecutionTime.Equal(e.t0.Add(2*m)) {
						t.Errorf("late run's history = %+v, want expected time 2m", h)
					}
				}
			})
		})
	}
}

func repeat(d time.Duration, n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = d
	}
	return out
}

func TestCollectionDisabled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnv(t, scheduler.Config{Misfire: scheduler.MisfireSkip})
		e.start()
		defer e.stop()
		e.put("j", jobJSON(e.t0.Add(time.Minute), `"recurrence": {"frequency": "Minute"}`))
		if _, err := e.s.DisableCollection(ctx, "c"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5*time.Minute + 30*time.Second)
		synctest.Wait()
		if n := len(e.exec.times(e.t0)); n != 0 {
			t.Errorf("%d attempts in a Disabled collection, want 0", n)
		}
		if _, err := e.s.RunJob(ctx, "c", "j"); !errors.Is(err, scheduler.ErrCollectionNotEnabled) {
			t.Errorf("RunJob in a Disabled collection: %v, want ErrCollectionNotEnabled", err)
		}
		if r := e.job("j"); r.State != scheduler.JobEnabled {
			t.Errorf("job state = %s, want it to keep Enabled", r.State)
		}
		if _, err := e.s.EnableCollection(ctx, "c"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		// Under Skip, 5m, found 30 seconds late at 5m30s, is within
		// Config.MisfireThreshold and runs; 1m..4m are passed over.
		if diff := cmp.Diff([]time.Duration{5*time.Minute + 30*time.Second, 6 * time.Minute}, e.exec.times(e.t0)); diff != "" {
			t.Errorf("attempt times after enabling (-want +got):\n%s", diff)
		}
	})
}

func TestDisableAndEnableJob(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnv(t, scheduler.Config{})
		e.start()
		defer e.stop()
		e.put("j", jobJSON(e.t0.Add(time.Minute), `"recurrence": {"frequency": "Minute"}`))
		r, err := e.s.DisableJob(ctx, "c", "j")
		if err != nil || r.State != scheduler.JobDisabled || r.Status.NextExecutionTime != nil {
			t.Fatalf("DisableJob = %+v, %v; want Disabled without nextExecutionTime", r, err)
		}
		time.Sleep(5*time.Minute + 30*time.Second)
		synctest.Wait()
		if n := len(e.exec.times(e.t0)); n != 0 {
			t.Errorf("%d attempts of a Disabled job, want 0", n)
		}
		if _, err := e.s.EnableJob(ctx, "c", "j"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		// Enabling does not catch up: next occurrence at 6m.
		if diff := cmp.Diff([]time.Duration{6 * time.Minute}, e.exec.times(e.t0)); diff != "" {
			t.Errorf("attempt times after enabling (-want +got):\n%s", diff)
		}
	})
}

func TestRunJob(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnv(t, scheduler.Config{})
		e.start()
		defer e.stop()
		e.put("j", jobJSON(e.t0.Add(time.Hour), `"recurrence": {"frequency": "Hour", "count": 1}`))
		time.Sleep(time.Minute)
		if _, err := e.s.RunJob(ctx, "c", "j"); err != nil {
			t.Fatalf("RunJob: %v", err)
		}
		synctest.Wait()
		r := e.job("j")
		if r.State != scheduler.JobEnabled || r.Status.ExecutionCount != 1 || r.Status.NextExecutionTime == nil ||
			!r.Status.NextExecutionTime.Equal(e.t0.Add(time.Hour)) {
			t.Errorf("after RunJob: %s %+v; want Enabled, 1 execution, next at 1h", r.State, r.Status)
		}
		time.Sleep(2 * time.Hour)
		synctest.Wait()
		if diff := cmp.Diff([]time.Duration{time.Minute, time.Hour}, e.exec.times(e.t0)); diff != "" {
			t.Errorf("attempt times (-want +got):\n%s", diff)
		}
		if r := e.job("j"); r.State != scheduler.JobCompleted {
			t.Errorf("state = %s, want Completed (the manual run does not count toward count)", r.State)
		}
		if _, err := e.s.RunJob(ctx, "c", "j"); !errors.Is(err, scheduler.ErrFinalState) {
			t.Errorf("RunJob(Completed job): %v, want ErrFinalState", err)
		}
	})
}

func TestStopWaitsForAttempts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{})
		e.exec.fn = func(req *action.Request, n int) error {
			time.Sleep(30 * time.Second)
			return nil
		}
		e.start()
		e.put("j", jobJSON(time.Time{}, ""))
		time.Sleep(time.Second)
		before := time.Now()
		e.stop()
		if waited := time.Since(before); waited != 29*time.Second {
			t.Errorf("Stop returned after %v, want 29s (the rest of the attempt)", waited)
		}
		if h := e.history("j"); len(h) != 1 || h[0].Status != scheduler.StatusCompleted {
			t.Errorf("history after Stop = %+v, want the completed attempt", h)
		}
		if _, err := e.s.GetJob(context.Background(), "c", "j"); !errors.Is(err, scheduler.ErrStopped) {
			t.Errorf("GetJob after Stop: %v, want ErrStopped", err)
		}
		if err := e.s.Start(context.Background()); !errors.Is(err, scheduler.ErrStopped) {
			t.Errorf("Start after Stop: %v, want ErrStopped", err)
		}
		if err := e.s.Stop(context.Background()); !errors.Is(err, scheduler.ErrStopped) {
			t.Errorf("second Stop: %v, want ErrStopped", err)
		}
	})
}

func TestStopDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{})
		e.exec.fn = func(req *action.Request, n int) error {
			time.Sleep(time.Hour) // ignores ctx on purpose
			return nil
		}
		e.start()
		e.put("j", jobJSON(time.Time{}, ""))
		synctest.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := e.s.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Stop with a short deadline: %v, want DeadlineExceeded", err)
		}
		time.Sleep(2 * time.Hour) // let the stubborn attempt end before the bubble does
		synctest.Wait()
	})
}

// TestStopCancelsAttemptContexts: Stop's context ends while an attempt
// runs; its context is cancelled, and the attempt is recorded as failed
// because the scheduler stopped (not as timed out), whether its executor
// returns the context's error or, past a second after the cancellation,
// nothing (see TestSuccessAtStop for success returned sooner).
func TestStopCancelsAttemptContexts(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  bool // the executor returns the context's error
		want string
	}{
		{name: "error", err: true, want: "cancelled: the scheduler stopped: context canceled"},
		{name: "no error", want: "cancelled: the scheduler stopped"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, scheduler.Config{})
				cancelled := make(chan error, 1)
				e.exec = &fake{}
				reg := &action.Registry{}
				reg.Register(action.HTTP, action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
					<-ctx.Done()
					cancelled <- ctx.Err()
					if tt.err {
						return nil, ctx.Err()
					}
					time.Sleep(2 * time.Second)
					return nil, nil
				}))
				e.cfg.Executors = reg
				e.s = e.newScheduler()
				e.start()
				e.put("j", jobJSON(time.Time{}, ""))
				synctest.Wait()
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				if err := e.s.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("Stop: %v, want DeadlineExceeded", err)
				}
				if err := <-cancelled; !errors.Is(err, context.Canceled) {
					t.Errorf("attempt context ended with %v, want Canceled", err)
				}
				synctest.Wait()
				if h := e.history("j"); len(h) != 1 || h[0].Status != scheduler.StatusFailed || h[0].Message != tt.want {
					t.Errorf("history = %+v, want the cancelled attempt recorded as Failed, %q", h, tt.want)
				}
			})
		})
	}
}

func TestTwoInstancesShareAStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{InstanceID: "a"})
		cfgB := e.cfg
		cfgB.InstanceID = "b"
		b, err := scheduler.New(e.store, &cfgB)
		if err != nil {
			t.Fatal(err)
		}
		e.start()
		if err := b.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		for i := range 20 {
			e.put(fmt.Sprintf("j%d", i), jobJSON(e.t0.Add(time.Minute), `"recurrence": {"frequency": "Minute", "count": 3}`))
		}
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		e.stop()
		if err := b.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		if n := len(e.exec.times(e.t0)); n != 60 {
			t.Errorf("%d attempts for 20 jobs × 3 occurrences on two instances, want exactly 60", n)
		}
	})
}

func TestConcurrencyLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{MaxConcurrency: 3})
		var mu sync.Mutex
		running, peak := 0, 0
		e.exec.fn = func(req *action.Request, n int) error {
			mu.Lock()
			running++
			peak = max(peak, running)
			mu.Unlock()
			time.Sleep(10 * time.Second)
			mu.Lock()
			running--
			mu.Unlock()
			return nil
		}
		if _, err := e.s.PutCollection(context.Background(), "c", &scheduler.JobCollection{Properties: scheduler.CollectionProperties{Quota: &scheduler.Quota{MaxJobCount: 100}}}, nil); err != nil {
			t.Fatal(err)
		}
		e.start()
		defer e.stop()
		for i := range 10 {
			e.put(fmt.Sprintf("j%d", i), jobJSON(time.Time{}, ""))
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if peak != 3 || len(e.exec.times(e.t0)) != 10 {
			t.Errorf("peak concurrency %d with %d attempts; want 3 and 10", peak, len(e.exec.times(e.t0)))
		}
	})
}

// TestSlowAttemptsStartTogether checks that jobs due together all get a
// worker at once when their attempts wait: each attempt waits until every
// one has started, so an attempt left queued behind a waiting one would
// hold them all until the timeout.
func TestSlowAttemptsStartTogether(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 40
		e := newEnv(t, scheduler.Config{MaxConcurrency: n})
		var mu sync.Mutex
		started := 0
		all := make(chan struct{})
		var startedAt []time.Time
		e.exec.fn = func(req *action.Request, _ int) error {
			mu.Lock()
			started++
			startedAt = append(startedAt, time.Now())
			if started == n {
				close(all)
			}
			mu.Unlock()
			select {
			case <-all:
				return nil
			case <-time.After(time.Minute):
				return errors.New("not every attempt started")
			}
		}
		if _, err := e.s.PutCollection(context.Background(), "c", &scheduler.JobCollection{Properties: scheduler.CollectionProperties{Quota: &scheduler.Quota{MaxJobCount: n}}}, nil); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			e.put(fmt.Sprintf("j%d", i), jobJSON(e.t0.Add(time.Minute), ""))
		}
		e.start()
		defer e.stop()
		time.Sleep(3 * time.Minute)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		if started != n {
			t.Fatalf("%d of %d attempts started", started, n)
		}
		for i, at := range startedAt {
			if !at.Equal(startedAt[0]) {
				t.Errorf("attempt %d started %v after the first", i, at.Sub(startedAt[0]))
			}
		}
		for i := range n {
			if h := e.history(fmt.Sprintf("j%d", i)); len(h) != 1 || h[0].Status != scheduler.StatusCompleted {
				t.Errorf("j%d history %+v, want one Completed entry", i, h)
			}
		}
	})
}

func TestOnHistory(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{})
		e.exec.fn = failing
		e.start()
		defer e.stop()
		e.put("j", jobJSON(time.Time{}, `"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}, "retryPolicy": {"retryType": "Fixed", "retryInterval": "PT15S", "retryCount": 1}}`))
		time.Sleep(time.Minute)
		synctest.Wait()
		stored := e.history("j")
		e.mu.Lock()
		seen := append([]scheduler.HistoryEntry(nil), e.hist...)
		e.mu.Unlock()
		// OnHistory sees entries oldest first; the store lists newest first.
		for i, j := 0, len(seen)-1; i < j; i, j = i+1, j-1 {
			seen[i], seen[j] = seen[j], seen[i]
		}
		if diff := cmp.Diff(stored, seen); diff != "" || len(seen) != 2 {
			t.Errorf("OnHistory entries differ from stored history (-stored +seen):\n%s", diff)
		}
	})
}

func TestRetention(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{HistoryPerJob: 2, FinalJobRetention: time.Hour, HistoryRetention: 24 * time.Hour})
		e.start()
		defer e.stop()
		e.put("done", jobJSON(time.Time{}, ""))
		e.put("many", jobJSON(e.t0.Add(time.Minute), `"recurrence": {"frequency": "Minute"}`))
		time.Sleep(5*time.Minute + 30*time.Second)
		synctest.Wait()
		if n := len(e.history("many")); n != 5 {
			t.Fatalf("history before the prune: %d entries, want 5", n)
		}
		time.Sleep(5 * time.Minute) // the prune runs every 10 minutes
		synctest.Wait()
		// The prune at 10m runs beside occurrence 10: it keeps 9 and 10,
		// or 8 and 9 with 10 recorded after it.
		if h := e.history("many"); len(h) < 2 || len(h) > 3 || h[0].RepeatCount != 10 || h[len(h)-1].RepeatCount != 11-len(h) {
			t.Errorf("history after the prune: %d entries, newest %d; want 10, 9 (and 8)", len(h), h[0].RepeatCount)
		}
		if _, err := e.store.GetJob(context.Background(), "c", "done"); err != nil {
			t.Errorf("Completed job pruned before FinalJobRetention: %v", err)
		}
		time.Sleep(time.Hour)
		synctest.Wait()
		if _, err := e.store.GetJob(context.Background(), "c", "done"); !errors.Is(err, scheduler.ErrNotFound) {
			t.Errorf("Completed job kept after FinalJobRetention: %v", err)
		}
		if _, err := e.store.GetJob(context.Background(), "c", "many"); err != nil {
			t.Errorf("Enabled job pruned: %v", err)
		}
	})
}

// TestRetentionCountsFromTheLastRun: a job that ends long after it was put
// is kept for FinalJobRetention after the run that ended it, not after the
// put.
func TestRetentionCountsFromTheLastRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{FinalJobRetention: time.Hour})
		e.start()
		defer e.stop()
		e.put("late", jobJSON(e.t0.Add(3*time.Hour), ""))
		time.Sleep(3*time.Hour + 30*time.Minute)
		synctest.Wait()
		r, err := e.store.GetJob(context.Background(), "c", "late")
		if err != nil {
			t.Fatalf("job pruned 30 minutes after its run: %v", err)
		}
		if r.State != scheduler.JobCompleted || !r.Updated.Equal(e.t0.Add(3*time.Hour)) {
			t.Errorf("job %s updated at %v, want Completed at 3h", r.State, r.Updated.Sub(e.t0))
		}
		time.Sleep(time.Hour)
		synctest.Wait()
		if _, err := e.store.GetJob(context.Background(), "c", "late"); !errors.Is(err, scheduler.ErrNotFound) {
			t.Errorf("job kept more than FinalJobRetention after its run: %v", err)
		}
	})
}

// TestMergedOccurrencesDoNotCount pins that occurrences merged into a
// waiting one do not use up recurrence.count.
func TestMergedOccurrencesDoNotCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{})
		e.exec.fn = func(req *action.Request, n int) error {
			if req.Occurrence == 1 && req.Retry < 2 {
				return errors.New("boom")
			}
			return nil
		}
		e.start()
		defer e.stop()
		// Occurrence 1 retries at 100 s and 200 s; 2 (due 60 s) waits,
		// 120 s and 180 s merge into it; 3 runs at 240 s.
		e.put("j", jobJSON(e.t0, `"recurrence": {"frequency": "Minute", "count": 3},
			"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"},
			"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT100S", "retryCount": 3}}`))
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		s := time.Second
		if diff := cmp.Diff([]time.Duration{0, 100 * s, 200 * s, 200 * s, 240 * s}, e.exec.times(e.t0)); diff != "" {
			t.Errorf("attempt times (-want +got):\n%s", diff)
		}
		if r := e.job("j"); r.State != scheduler.JobCompleted {
			t.Errorf("state = %s, want Completed", r.State)
		}
	})
}

// firstAttemptTakes makes e's first attempt take d, and returns a channel
// that receives when it starts; the other attempts succeed at once.
func (e *env) firstAttemptTakes(d time.Duration) <-chan struct{} {
	started := make(chan struct{}, 1)
	e.exec.fn = func(req *action.Request, n int) error {
		if n == 0 {
			started <- struct{}{}
			time.Sleep(d)
		}
		return nil
	}
	return started
}

// A run requested at the very instant a scheduled occurrence was claimed,
// while that occurrence's attempt runs, waits its turn like any run
// requested later: the scheduled attempt keeps its occurrence number, and
// the run gets a Postponed entry and the next number.
func TestRunJobAtTheClaimInstantIsPostponed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{})
		started := e.firstAttemptTakes(30 * time.Second)
		// The occurrence expected at 1m is found missed at 2m, when the
		// scheduler starts: its expected time differs from the run's.
		e.put("j", jobJSON(e.t0.Add(time.Minute), `"recurrence": {"frequency": "Hour"}`))
		time.Sleep(2 * time.Minute)
		e.start()
		defer e.stop()
		<-started
		if _, err := e.s.RunJob(context.Background(), "c", "j"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		m := time.Minute
		want := []row{
			{scheduler.MainAction, scheduler.StatusCompleted, 2 * m, 2*m + 30*time.Second, 0, 2},
			{scheduler.MainAction, scheduler.StatusPostponed, 2 * m, 2 * m, 0, 2}, // when it was requested
			{scheduler.MainAction, scheduler.StatusCompleted, m, 2 * m, 0, 1},
		}
		if diff := cmp.Diff(want, e.rows("j")); diff != "" {
			t.Errorf("history (-want +got):\n%s", diff)
		}
		var expected []time.Time
		for _, req := range e.exec.requests() {
			expected = append(expected, req.ExpectedTime)
		}
		if diff := cmp.Diff([]time.Time{e.t0.Add(m), e.t0.Add(2 * m)}, expected); diff != "" {
			t.Errorf("expected times of the attempts (-want +got):\n%s", diff)
		}
		if r := e.job("j"); r.Status.ExecutionCount != 2 || !r.Status.NextExecutionTime.Equal(e.t0.Add(time.Hour+m)) {
			t.Errorf("status = %+v, want 2 executions and the next at 1h1m", r.Status)
		}
	})
}

// TestRunJobThenPatchWhileRunning: a run requested while a one-time job's
// attempt runs, and a change of the job's action after it, before the
// attempt ends. The outcome conflicts with the change and its claim's step
// is replayed on the changed job without the request (made after the
// claim): the job must not end there, with the run still asked for, but
// run it once the attempt is over.
func TestRunJobThenPatchWhileRunning(t *testing.T) {
	for _, patch := range []string{
		`{"action": {"type": "Http", "request": {"uri": "http://example.invalid/patched", "method": "GET"}}}`,
		`{"state": "Disabled"}`,
	} {
		t.Run(patch, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, scheduler.Config{})
				started := e.firstAttemptTakes(30 * time.Second)
				e.start()
				defer e.stop()
				e.put("j", jobJSON(e.t0.Add(time.Minute), ""))
				<-started
				time.Sleep(5 * time.Second)
				if _, err := e.s.RunJob(context.Background(), "c", "j"); err != nil {
					t.Fatal(err)
				}
				if _, err := e.s.PatchJob(context.Background(), "c", "j", []byte(patch), nil); err != nil {
					t.Fatal(err)
				}
				if strings.Contains(patch, "Disabled") {
					if _, err := e.s.PatchJob(context.Background(), "c", "j", []byte(`{"state": "Enabled"}`), nil); err != nil {
						t.Fatal(err)
					}
				}
				time.Sleep(2 * time.Minute)
				synctest.Wait()
				if r := e.job("j"); r.Status.ExecutionCount != 2 || r.State != scheduler.JobCompleted || !r.Schedule.RunRequested.IsZero() {
					t.Errorf("job = %v, %+v, run requested %v; want Completed after 2 executions, none requested", r.State, r.Status, r.Schedule.RunRequested)
				}
			})
		})
	}
}

func TestRunJobWhileRunningIsPostponed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{})
		e.exec.fn = func(req *action.Request, n int) error {
			if n == 0 {
				time.Sleep(30 * time.Second)
			}
			return nil
		}
		e.start()
		defer e.stop()
		e.put("j", jobJSON(e.t0, `"recurrence": {"frequency": "Hour"}`))
		time.Sleep(10 * time.Second)
		if _, err := e.s.RunJob(context.Background(), "c", "j"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		want := []row{
			{scheduler.MainAction, scheduler.StatusCompleted, 10 * time.Second, 30 * time.Second, 0, 2},
			{scheduler.MainAction, scheduler.StatusPostponed, 10 * time.Second, 10 * time.Second, 0, 2}, // when it was requested
			{scheduler.MainAction, scheduler.StatusCompleted, 0, 0, 0, 1},
		}
		if diff := cmp.Diff(want, e.rows("j")); diff != "" {
			t.Errorf("history (-want +got):\n%s", diff)
		}
		if r := e.job("j"); r.Status.ExecutionCount != 2 || !r.Status.NextExecutionTime.Equal(e.t0.Add(time.Hour)) {
			t.Errorf("status = %+v, want 2 executions and the next at 1h", r.Status)
		}
	})
}
