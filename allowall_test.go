package scheduler_test

import (
	stdcmp "cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/internal/syncbuf"
	"github.com/jobclock/scheduler/store/memory"
)

// sideBySide is an executor whose attempts last hold(req) and fail when
// fail(req) says so; it records each attempt's occurrence, retry and
// start, and how many ran at once at most.
type sideBySide struct {
	hold func(req *action.Request) time.Duration
	fail func(req *action.Request) bool
	// block, when not nil, is waited on by attempts of the occurrence
	// numbered blockOcc, whatever their context says.
	block    chan struct{}
	blockOcc int

	t0      time.Time // Start is an offset from it
	mu      sync.Mutex
	runs    []sideRun
	now     int
	maxRuns int
}

type sideRun struct {
	Occurrence, Retry int
	Start             time.Duration
	Tag               string
	ErrorAction       bool
}

func (x *sideBySide) Execute(ctx context.Context, req *action.Request) (*action.Result, error) {
	x.mu.Lock()
	x.runs = append(x.runs, sideRun{req.Occurrence, req.Retry, time.Since(x.t0), req.ExecutionTag(), req.ErrorAction})
	x.now++
	x.maxRuns = max(x.maxRuns, x.now)
	x.mu.Unlock()
	defer func() {
		x.mu.Lock()
		x.now--
		x.mu.Unlock()
	}()
	if x.block != nil && req.Occurrence == x.blockOcc {
		<-x.block // ignores its context, as a hung instance would
	} else if x.hold != nil {
		select {
		case <-time.After(x.hold(req)):
		case <-ctx.Done():
			return &action.Result{Message: "stopped"}, ctx.Err()
		}
	}
	if x.fail != nil && x.fail(req) {
		return &action.Result{Message: "failed"}, errors.New("boom")
	}
	return &action.Result{Message: "ok"}, nil
}

// holdOne returns a sideBySide.hold under which the attempts of
// occurrence n last d, and the others' other.
func holdOne(n int, d, other time.Duration) func(*action.Request) time.Duration {
	return func(req *action.Request) time.Duration {
		if req.Occurrence == n {
			return d
		}
		return other
	}
}

// attempts returns the attempts without their tags.
func (x *sideBySide) attempts() []sideRun {
	x.mu.Lock()
	defer x.mu.Unlock()
	out := slices.Clone(x.runs)
	for i := range out {
		out[i].Tag = ""
	}
	return out
}

// allowAllEnv is an env whose Http executor is x.
func allowAllEnv(t *testing.T, x *sideBySide, cfg scheduler.Config) *env {
	e := newEnv(t, cfg)
	x.t0 = e.t0
	reg := new(action.Registry)
	reg.Register(action.HTTP, x)
	e.cfg.Executors = reg
	e.s = e.newScheduler()
	return e
}

// over replaces e's Scheduler with one over st (a wrapper of e.store).
func (e *env) over(st scheduler.Store) {
	s, err := scheduler.New(st, &e.cfg)
	if err != nil {
		e.t.Fatalf("New: %v", err)
	}
	e.s = s
}

func allowAllJob(start time.Time, extra string) string {
	return `{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}, "retryPolicy": {"retryType": "None"}},
		"startTime": "` + start.Format(time.RFC3339) + `", "runPolicy": {"overlap": "AllowAll"}, ` + extra + `}`
}

// TestAllowAllSideBySide: three occurrences a minute apart whose attempts
// last 2m30s run side by side, each once, on time; the job is Completed
// only when the last of them ended, with its counters and history.
func TestAllowAllSideBySide(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		x := &sideBySide{hold: func(*action.Request) time.Duration { return 150 * time.Second }}
		obs := &storeCalls{}
		e := allowAllEnv(t, x, scheduler.Config{ActionTimeout: time.Hour, Observer: obs})
		e.start()
		defer e.stop()
		m := time.Minute
		e.put("j", allowAllJob(e.t0.Add(m), `"recurrence": {"frequency": "Minute", "count": 3}`))
		time.Sleep(5 * m)
		synctest.Wait()
		want := []sideRun{{Occurrence: 1, Start: m}, {Occurrence: 2, Start: 2 * m}, {Occurrence: 3, Start: 3 * m}}
		if diff := cmp.Diff(want, x.attempts()); diff != "" {
			t.Errorf("attempts (-want +got):\n%s", diff)
		}
		if x.maxRuns != 3 {
			t.Errorf("at most %d attempts ran at once, want 3", x.maxRuns)
		}
		if r := e.job("j"); r.State != scheduler.JobEnabled || r.Status.ExecutionCount != 2 {
			t.Errorf("at 5m (occurrence 3 runs until 5m30s): state %s, executionCount %d; want Enabled, 2", r.State, r.Status.ExecutionCount)
		}
		time.Sleep(m)
		synctest.Wait()
		r := e.job("j")
		if r.State != scheduler.JobCompleted || r.Status.ExecutionCount != 3 || r.Status.FailureCount != 0 ||
			r.Status.LastExecutionTime == nil || !r.Status.LastExecutionTime.Equal(e.t0.Add(3*m)) {
			t.Errorf("at 6m: state %s, status %+v; want Completed, 3 executions, the last at 3m", r.State, r.Status)
		}
		var got []row
		for _, h := range e.history("j") {
			got = append(got, row{h.ActionName, h.Status, h.ExpectedExecutionTime.Sub(e.t0), h.StartTime.Sub(e.t0), h.RetryCount, h.RepeatCount})
		}
		wantRows := []row{
			{scheduler.MainAction, scheduler.StatusCompleted, 3 * m, 3 * m, 0, 3},
			{scheduler.MainAction, scheduler.StatusCompleted, 2 * m, 2 * m, 0, 2},
			{scheduler.MainAction, scheduler.StatusCompleted, m, m, 0, 1},
		}
		if diff := cmp.Diff(wantRows, got); diff != "" {
			t.Errorf("history (-want +got):\n%s", diff)
		}
		if n := obs.count("PutJob"); n != 3 {
			t.Errorf("the Observer saw %d PutJob calls that succeeded, want 3 (an outcome each)", n)
		}
	})
}

// storeCalls is an Observer that counts the run loop's store calls that
// succeeded, by Op.
type storeCalls struct {
	traceParent
	mu  sync.Mutex
	ops map[string]int
}

func (o *storeCalls) StoreCalled(c scheduler.StoreCall) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.ops == nil {
		o.ops = map[string]int{}
	}
	if c.Err == nil {
		o.ops[c.Op]++
	}
}

func (o *storeCalls) count(op string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.ops[op]
}

// TestAllowAllRetries: the retries and the errorAction of an occurrence
// run while the next occurrences start, each occurrence with its own
// execution tag; the fault counts once.
func TestAllowAllRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		x := &sideBySide{
			hold: func(*action.Request) time.Duration { return 50 * time.Second },
			fail: func(req *action.Request) bool { return req.Occurrence == 1 && !req.ErrorAction },
		}
		e := allowAllEnv(t, x, scheduler.Config{ActionTimeout: time.Hour})
		e.start()
		defer e.stop()
		m := time.Minute
		e.put("j", `{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"},
			"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT20S", "retryCount": 1},
			"errorAction": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/err", "method": "GET"}, "retryPolicy": {"retryType": "None"}}},
			"startTime": "`+e.t0.Add(m).Format(time.RFC3339)+`", "runPolicy": {"overlap": "AllowAll"}, "recurrence": {"frequency": "Minute", "count": 3}}`)
		time.Sleep(6 * m)
		synctest.Wait()
		// Occurrence 1: 1m to 1m50s fails, its retry at 2m10s to 3m fails,
		// its errorAction at 3m; 2 starts at 2m and 3 at 3m meanwhile.
		want := []sideRun{
			{Occurrence: 1, Start: m},
			{Occurrence: 2, Start: 2 * m},
			{Occurrence: 1, Retry: 1, Start: 2*m + 10*time.Second},
			{Occurrence: 3, Start: 3 * m},
			{Occurrence: 1, Start: 3 * m, ErrorAction: true},
		}
		got := x.attempts()
		sortRuns := func(r []sideRun) {
			slices.SortStableFunc(r, func(a, b sideRun) int { return stdcmp.Compare(a.Start, b.Start) })
		}
		sortRuns(got)
		// 3 and the errorAction start at the same instant, in any order.
		if len(got) == len(want) && got[3].ErrorAction {
			got[3], got[4] = got[4], got[3]
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("attempts (-want +got):\n%s", diff)
		}
		tags := map[int]string{}
		for _, ru := range x.runs {
			if old, ok := tags[ru.Occurrence]; ok && old != ru.Tag {
				t.Errorf("occurrence %d ran with tags %s and %s, want one", ru.Occurrence, old, ru.Tag)
			}
			tags[ru.Occurrence] = ru.Tag
		}
		if len(tags) != 3 || tags[1] == tags[2] || tags[2] == tags[3] || tags[1] == tags[3] {
			t.Errorf("execution tags by occurrence %v, want three different ones", tags)
		}
		r := e.job("j")
		if r.State != scheduler.JobCompleted || r.Status.ExecutionCount != 4 || r.Status.FailureCount != 2 || r.Status.FaultedCount != 1 {
			t.Errorf("job: state %s, status %+v; want Completed, 4 executions, 2 failures, 1 faulted", r.State, r.Status)
		}
		if n := len(e.history("j")); n != 5 {
			t.Errorf("%d history entries, want 5 (one per attempt)", n)
		}
	})
}

// TestAllowAllOutOfOrder: occurrence 1 faults after occurrence 2, which
// started later, succeeded: the counters count both, lastExecutionTime is
// occurrence 2's start, and the late fault neither makes the job Failing
// nor pauses it (pauseAfterFaults 1), since a newer occurrence succeeded.
func TestAllowAllOutOfOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		x := &sideBySide{
			hold: holdOne(1, 150*time.Second, 10*time.Second),
			fail: func(req *action.Request) bool { return req.Occurrence == 1 },
		}
		e := allowAllEnv(t, x, scheduler.Config{ActionTimeout: time.Hour})
		e.start()
		defer e.stop()
		m := time.Minute
		e.put("j", `{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}, "retryPolicy": {"retryType": "None"}},
			"startTime": "`+e.t0.Add(m).Format(time.RFC3339)+`", "recurrence": {"frequency": "Minute", "count": 2},
			"runPolicy": {"overlap": "AllowAll", "pauseAfterFaults": 1}}`)
		time.Sleep(4 * m)
		synctest.Wait()
		r, err := e.s.GetJob(context.Background(), "c", "j")
		if err != nil {
			t.Fatal(err)
		}
		if r.State != scheduler.JobCompleted || r.Status.ExecutionCount != 2 || r.Status.FailureCount != 1 || r.Status.FaultedCount != 1 ||
			r.Status.LastExecutionTime == nil || !r.Status.LastExecutionTime.Equal(e.t0.Add(2*m)) {
			t.Errorf("job: state %s, status %+v; want Completed (not paused), 2 executions, 1 failure, 1 faulted, the last at 2m", r.State, r.Status)
		}
		if r.Status.Health != scheduler.HealthOK {
			t.Errorf("health %s, want OK: the newest occurrence succeeded", r.Status.Health)
		}
	})
}

// TestAllowAllBound: at most MaxRunning occurrences are in progress at
// once; one that comes due while that many are is skipped, on record.
func TestAllowAllBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		x := &sideBySide{hold: func(*action.Request) time.Duration { return 12*time.Minute + 30*time.Second }}
		e := allowAllEnv(t, x, scheduler.Config{ActionTimeout: time.Hour})
		e.start()
		defer e.stop()
		m := time.Minute
		n := scheduler.MaxRunning
		e.put("j", allowAllJob(e.t0.Add(m), `"recurrence": {"frequency": "Minute"}`))
		// 1 to 10 start at 1m to 10m; those due at 11m and 12m find ten
		// in progress; 1 ends at 13m30s, so 13m is skipped too; 14m and
		// 15m run as 11 and 12 (skipped ones do not count).
		time.Sleep(15 * m)
		synctest.Wait()
		var occ []int
		for _, a := range x.attempts() {
			occ = append(occ, a.Occurrence)
		}
		if diff := cmp.Diff([]int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, occ); diff != "" {
			t.Errorf("occurrences run (-want +got):\n%s", diff)
		}
		if x.maxRuns != n {
			t.Errorf("at most %d attempts ran at once, want %d", x.maxRuns, n)
		}
		skips := e.skips("j")
		if len(skips) != 3 {
			t.Fatalf("Skipped entries %+v, want three", skips)
		}
		for i, h := range skips {
			if want := e.t0.Add(time.Duration(11+i) * m); !h.ExpectedExecutionTime.Equal(want) || h.Skipped != 1 ||
				!strings.Contains(h.Message, fmt.Sprintf("runs at most %d at once", n)) {
				t.Errorf("Skipped entry %d = %+v, want occurrence at %v, saying at most %d run at once", i, h, want, n)
			}
		}
	})
}

// TestAllowAllTakeover: the attempt of an instance that stops without
// waiting for it (a crash, as far as the store can tell) is run again by
// another instance, with the same execution tag, once its claim expired
// (the attempt's timeout and the lease duration after it started); the
// stopped instance's late outcome is not recorded, and the other
// occurrences are not held up meanwhile.
func TestAllowAllTakeover(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hung := &sideBySide{block: make(chan struct{}), blockOcc: 1}
		e := allowAllEnv(t, hung, scheduler.Config{ActionTimeout: time.Minute, LeaseDuration: 10 * time.Second, InstanceID: "a"})
		e.start()
		m := time.Minute
		e.put("j", allowAllJob(e.t0.Add(m), `"recurrence": {"frequency": "Minute", "count": 3}`))
		time.Sleep(m + time.Second)
		synctest.Wait()
		// a stops without waiting for its attempt; b starts.
		gone, cancel := context.WithCancel(context.Background())
		cancel()
		if err := e.s.Stop(gone); !errors.Is(err, context.Canceled) {
			t.Fatalf("Stop with its attempt running = %v, want context.Canceled", err)
		}
		// b's attempt of occurrence 1 runs from 2m10s to 3m40s: a's
		// returns meanwhile.
		other := &sideBySide{t0: e.t0, hold: holdOne(1, 90*time.Second, 0)}
		cfg := e.cfg
		cfg.InstanceID = "b"
		var logs syncbuf.Buffer
		cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		reg := new(action.Registry)
		reg.Register(action.HTTP, other)
		cfg.Executors = reg
		b, err := scheduler.New(e.store, &cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		defer b.Stop(context.Background())
		time.Sleep(2 * m)
		synctest.Wait()
		close(hung.block) // a's attempt returns, long after its claim expired
		synctest.Wait()
		time.Sleep(2 * m)
		synctest.Wait()

		var a1, b1 []sideRun
		for _, r := range hung.runs {
			if r.Occurrence == 1 {
				a1 = append(a1, r)
			}
		}
		for _, r := range other.runs {
			if r.Occurrence == 1 {
				b1 = append(b1, r)
			}
		}
		if len(a1) != 1 || len(b1) != 1 || a1[0].Tag != b1[0].Tag {
			t.Fatalf("occurrence 1 ran on a %+v and on b %+v; want once on each, with one tag", a1, b1)
		}
		// Claimed at 1m for the timeout (1m) and the lease (10s).
		if got := b1[0].Start; got < 2*m+10*time.Second || got > 2*m+20*time.Second {
			t.Errorf("b ran occurrence 1 at %v, want soon after 2m10s", got)
		}
		var all []int
		for _, r := range append(hung.attempts(), other.attempts()...) {
			all = append(all, r.Occurrence)
		}
		slices.Sort(all)
		if diff := cmp.Diff([]int{1, 1, 2, 3}, all); diff != "" {
			t.Errorf("occurrences run on a and b (-want +got):\n%s", diff)
		}
		if !strings.Contains(logs.String(), `msg="took over an occurrence whose claim expired" job=j collection=c occurrence=1 previous_owner=a`) {
			t.Errorf("b's log does not say it took occurrence 1 over from a:\n%s", logs.String())
		}
		var ones int
		for _, h := range e.history("j") {
			if h.RepeatCount == 1 {
				ones++
				if h.StartTime.Sub(e.t0) != b1[0].Start {
					t.Errorf("occurrence 1's entry is of the attempt that started at %v, want b's, at %v", h.StartTime.Sub(e.t0), b1[0].Start)
				}
			}
		}
		r := e.job("j")
		if ones != 1 || r.State != scheduler.JobCompleted || r.Status.ExecutionCount != 3 {
			t.Errorf("%d history entries of occurrence 1, state %s, %d executions; want 1, Completed, 3", ones, r.State, r.Status.ExecutionCount)
		}
	})
}

// noExtends is a memory store whose PutJob fails for the writes that only
// extend claims on attempts (they carry runs and no outcome).
type noExtends struct{ *memory.Store }

func (f noExtends) PutJob(ctx context.Context, r *scheduler.JobRecord) error {
	if p := r.Schedule.Policy; p != nil && len(p.Running) > 0 && p.Ends == nil {
		return errors.New("connection reset")
	}
	return f.Store.PutJob(ctx, r)
}

// TestAllowAllHungOwner: an attempt whose executor ignores its context
// runs once while its instance lives, long past its timeout and lease: the
// instance keeps its claim on the attempt, so that neither it nor another
// instance starts the occurrence again; its outcome is recorded when it
// returns. When the store fails the extensions of the claim, the instance,
// claiming the job once the claim passed, renews the claim rather than
// starting the occurrence again.
func TestAllowAllHungOwner(t *testing.T) {
	for _, tc := range []struct {
		name  string
		store func(*memory.Store) scheduler.Store
	}{
		{"extended", func(st *memory.Store) scheduler.Store { return st }},
		{"extensions fail", func(st *memory.Store) scheduler.Store { return noExtends{st} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				hung := &sideBySide{block: make(chan struct{}), blockOcc: 1}
				e := allowAllEnv(t, hung, scheduler.Config{ActionTimeout: time.Minute, LeaseDuration: 10 * time.Second, InstanceID: "a"})
				e.over(tc.store(e.store))
				e.start()
				defer e.stop()
				m := time.Minute
				e.put("j", allowAllJob(e.t0.Add(m), `"recurrence": {"frequency": "Minute", "count": 1}`))
				time.Sleep(10 * m)
				synctest.Wait()
				if diff := cmp.Diff([]sideRun{{Occurrence: 1, Start: m}}, hung.attempts()); diff != "" {
					t.Errorf("attempts by 10m of a live instance whose attempt hangs (-want +got):\n%s", diff)
				}
				if n, _ := e.s.InFlight(); n != 1 {
					t.Errorf("%d jobs in flight at 10m, want 1 (the hung attempt)", n)
				}
				close(hung.block)
				synctest.Wait()
				time.Sleep(m)
				synctest.Wait()
				r := e.job("j")
				if r.State != scheduler.JobFaulted || r.Status.ExecutionCount != 1 || len(hung.attempts()) != 1 {
					t.Errorf("after the attempt returned: state %s, status %+v, %d attempts; want Faulted (past its timeout), one execution, one attempt",
						r.State, r.Status, len(hung.attempts()))
				}
			})
		})
	}
}

// TestAllowAllDisable: disabling the job drops its occurrence that waits
// for a retry, with a Failed entry that says so; the one whose attempt is
// under way ends with it, counted,
// without a retry; nothing starts while the job is Disabled.
func TestAllowAllDisable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		x := &sideBySide{
			hold: holdOne(1, 10*time.Second, 150*time.Second),
			fail: func(*action.Request) bool { return true },
		}
		e := allowAllEnv(t, x, scheduler.Config{ActionTimeout: time.Hour})
		e.start()
		defer e.stop()
		m := time.Minute
		e.put("j", `{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"},
			"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT2M", "retryCount": 1}},
			"startTime": "`+e.t0.Add(m).Format(time.RFC3339)+`", "runPolicy": {"overlap": "AllowAll"}, "recurrence": {"frequency": "Minute"}}`)
		// 1 fails at 1m10s, its retry due at 3m10s; 2 runs from 2m to 4m30s.
		time.Sleep(2*m + 30*time.Second)
		if _, err := e.s.DisableJob(context.Background(), "c", "j"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * m)
		synctest.Wait()
		want := []sideRun{{Occurrence: 1, Start: m}, {Occurrence: 2, Start: 2 * m}}
		if diff := cmp.Diff(want, x.attempts()); diff != "" {
			t.Errorf("attempts (-want +got):\n%s", diff)
		}
		r := e.job("j")
		if r.State != scheduler.JobDisabled || r.Status.ExecutionCount != 2 || r.Status.FailureCount != 2 || r.Schedule.Policy != nil {
			t.Errorf("job: state %s, status %+v, policy state %+v; want Disabled, 2 failed executions, nothing in progress", r.State, r.Status, r.Schedule.Policy)
		}
		// The two attempts' entries, and that of occurrence 1's retry
		// that disabling the job dropped.
		hist := e.history("j")
		var dropped []int
		for _, h := range hist {
			if h.Message == "dropped before its next attempt: the job was Disabled" && h.Status == scheduler.StatusFailed {
				dropped = append(dropped, h.RepeatCount)
			}
		}
		if len(hist) != 3 || len(dropped) != 1 || dropped[0] != 1 {
			t.Errorf("history %+v; want 3 entries, one of them occurrence 1's retry dropped", hist)
		}
	})
}

// flakyPuts is a memory store whose PutJob fails, as a lost connection
// would (or with err when not nil), for the first failures outcomes of
// occurrences side by side that it is asked to write.
type flakyPuts struct {
	*memory.Store
	err      error
	mu       sync.Mutex
	failures int
}

func (f *flakyPuts) PutJob(ctx context.Context, r *scheduler.JobRecord) error {
	f.mu.Lock()
	fail := f.failures > 0 && r.Schedule.Policy != nil && r.Schedule.Policy.Ends != nil
	if fail {
		f.failures--
	}
	f.mu.Unlock()
	switch {
	case fail && f.err != nil:
		return f.err
	case fail:
		return errors.New("connection reset")
	}
	return f.Store.PutJob(ctx, r)
}

// TestAllowAllStoreFails: an outcome that the store fails to take, or
// whose writes conflict with others many times over, is written again
// until it is taken, and counts once; the attempt does not run again.
func TestAllowAllStoreFails(t *testing.T) {
	for _, tc := range []struct {
		name     string
		err      error
		failures int
	}{
		{"store fails", nil, 3},
		{"conflicts", scheduler.ErrConflict, 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				x := &sideBySide{}
				e := allowAllEnv(t, x, scheduler.Config{ActionTimeout: time.Minute, LeaseDuration: 10 * time.Second})
				flaky := &flakyPuts{Store: e.store, err: tc.err, failures: tc.failures}
				e.over(flaky)
				e.start()
				defer e.stop()
				m := time.Minute
				e.put("j", allowAllJob(e.t0.Add(m), `"recurrence": {"frequency": "Minute", "count": 1}`))
				time.Sleep(5 * m)
				synctest.Wait()
				if n := len(x.attempts()); n != 1 {
					t.Errorf("%d attempts, want 1", n)
				}
				r := e.job("j")
				h := e.history("j")
				if r.State != scheduler.JobCompleted || r.Status.ExecutionCount != 1 || len(h) != 1 || !h[0].EndTime.Equal(e.t0.Add(m)) {
					t.Errorf("job: state %s, status %+v, history %+v; want Completed, one execution, one entry of the attempt at 1m", r.State, r.Status, h)
				}
				if flaky.failures != 0 {
					t.Errorf("%d failures left, want 0", flaky.failures)
				}
			})
		})
	}
}

// TestAllowAllStoreFailsAtStop: an outcome that the store keeps failing
// to take is given up a LeaseDuration after Stop, as any outcome being
// recorded again, rather than at the end of the attempt's claim.
func TestAllowAllStoreFailsAtStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		x := &sideBySide{}
		e := allowAllEnv(t, x, scheduler.Config{ActionTimeout: time.Hour, LeaseDuration: 10 * time.Second})
		e.over(&flakyPuts{Store: e.store, failures: 1 << 30})
		e.start()
		m := time.Minute
		e.put("j", allowAllJob(e.t0.Add(m), `"recurrence": {"frequency": "Minute", "count": 1}`))
		time.Sleep(2 * m)
		start := time.Now()
		e.stop()
		if d := time.Since(start); d > 11*time.Second {
			t.Errorf("Stop returned after %v, want at most the lease (10s) and the last wait", d)
		}
		if n := len(x.attempts()); n != 1 {
			t.Errorf("%d attempts, want 1", n)
		}
	})
}

// TestAllowAllThenPostpone: a job put again, under Postpone, while an
// occurrence runs beside others under AllowAll keeps that occurrence,
// which ends with its attempt, and its outcome on record, though it ends
// while the next occurrence, started under Postpone, holds the job's
// lease (its attempt's outcome then conflicts and is recorded again over
// a fresh read).
func TestAllowAllThenPostpone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		x := &sideBySide{hold: func(*action.Request) time.Duration { return 150 * time.Second }}
		e := allowAllEnv(t, x, scheduler.Config{ActionTimeout: time.Hour})
		e.start()
		defer e.stop()
		m := time.Minute
		def := `{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}, "retryPolicy": {"retryType": "None"}},
			"startTime": "` + e.t0.Add(m).Format(time.RFC3339) + `", "recurrence": {"frequency": "Minute", "count": 2}, "runPolicy": {"overlap": "%s"}}`
		e.put("j", fmt.Sprintf(def, "AllowAll"))
		// 1 runs from 1m to 3m30s. The put starts the job afresh (its
		// count too): under Postpone, 2 (2m) runs from 2m to 4m30s, and 3
		// (3m) waits for it, then runs until 7m.
		time.Sleep(m + 30*time.Second)
		e.put("j", fmt.Sprintf(def, "Postpone"))
		time.Sleep(6 * m)
		synctest.Wait()
		var occ []int
		for _, h := range e.history("j") {
			if h.Status == scheduler.StatusCompleted {
				occ = append(occ, h.RepeatCount)
			}
		}
		slices.Sort(occ)
		if diff := cmp.Diff([]int{1, 2, 3}, occ); diff != "" {
			t.Errorf("occurrences on record (-want +got):\n%s", diff)
		}
		if r := e.job("j"); r.State != scheduler.JobCompleted || r.Status.ExecutionCount != 3 {
			t.Errorf("job: state %s, status %+v; want Completed, 3 executions", r.State, r.Status)
		}
	})
}

// oneAtATime puts collection c with a job limit of one attempt at a time.
func (e *env) oneAtATime() {
	if _, err := e.s.PutCollection(context.Background(), "c", &scheduler.JobCollection{Properties: scheduler.CollectionProperties{
		Quota: &scheduler.Quota{MaxJobCount: 10}, Limits: []scheduler.Limit{{Key: scheduler.LimitJob, MaxConcurrent: 1}}}}, nil); err != nil {
		e.t.Fatal(err)
	}
}

// TestAllowAllUnderLimit: the occurrences of an AllowAll job take the
// permits of their collection's limits like any attempt: under a job limit
// of one at a time, three occurrences a minute apart whose attempts last
// 2m30s run one after the other, each once, each as soon as the one before
// it gave its permit back, and each says in its history that it waited.
func TestAllowAllUnderLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		x := &sideBySide{hold: func(*action.Request) time.Duration { return 150 * time.Second }}
		e := allowAllEnv(t, x, scheduler.Config{ActionTimeout: time.Hour})
		e.oneAtATime()
		e.start()
		defer e.stop()
		m := time.Minute
		e.put("j", allowAllJob(e.t0.Add(m), `"recurrence": {"frequency": "Minute", "count": 3}`))
		time.Sleep(10 * m)
		synctest.Wait()
		got := x.attempts()
		if len(got) != 3 || x.maxRuns != 1 {
			t.Fatalf("attempts %+v, at most %d at once; want 3, one at a time", got, x.maxRuns)
		}
		for i, want := range []time.Duration{m, m + 150*time.Second, m + 300*time.Second} {
			if a := got[i]; a.Occurrence != i+1 || a.Start < want || a.Start > want+2*time.Second {
				t.Errorf("attempt %d: occurrence %d started at %v; want occurrence %d at %v (within the 1 s look again)", i, a.Occurrence, a.Start, i+1, want)
			}
		}
		r := e.job("j")
		if r.State != scheduler.JobCompleted || r.Status.ExecutionCount != 3 {
			t.Errorf("state %s, executionCount %d; want Completed, 3", r.State, r.Status.ExecutionCount)
		}
		waited := 0
		for _, h := range e.history("j") {
			if strings.Contains(h.Message, "for the collection's job limit") {
				waited++
			}
		}
		if waited != 2 {
			t.Errorf("%d history entries say they waited for the job limit, want 2", waited)
		}
	})
}

// runConflict is a memory store whose Record fails with ErrConflict, as
// when another write of the job came first, the first time it is asked to
// write a job with an occurrence that starts beside the job's others.
type runConflict struct {
	*memory.Store
	mu   sync.Mutex
	done bool
}

func (f *runConflict) Record(ctx context.Context, owner string, r *scheduler.JobRecord, hist []scheduler.HistoryEntry) error {
	f.mu.Lock()
	fail := !f.done && r.Schedule.Policy != nil && slices.ContainsFunc(r.Schedule.Policy.Running, func(ru scheduler.Run) bool { return ru.Owner != "" })
	f.done = f.done || fail
	f.mu.Unlock()
	if fail {
		return scheduler.ErrConflict
	}
	return f.Store.Record(ctx, owner, r, hist)
}

// TestAllowAllUnderLimitConflict: when the write that starts an occurrence
// beside others conflicts, the permits its attempt took are given back:
// the step taken again over a fresh read takes them again, and the
// occurrence starts on time rather than once they expire.
func TestAllowAllUnderLimitConflict(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		x := &sideBySide{}
		e := allowAllEnv(t, x, scheduler.Config{ActionTimeout: time.Hour})
		st := &runConflict{Store: e.store}
		e.over(st)
		e.oneAtATime()
		e.start()
		defer e.stop()
		m := time.Minute
		e.put("j", allowAllJob(e.t0.Add(m), `"recurrence": {"frequency": "Minute", "count": 1}`))
		time.Sleep(5 * m)
		synctest.Wait()
		if !st.done {
			t.Fatal("the store made no write conflict")
		}
		if diff := cmp.Diff([]sideRun{{Occurrence: 1, Start: m}}, x.attempts()); diff != "" {
			t.Errorf("attempts (-want +got):\n%s", diff)
		}
		if r := e.job("j"); r.State != scheduler.JobCompleted {
			t.Errorf("state %s, want Completed", r.State)
		}
	})
}

// TestAllowAllHungUnderLimit: the permits of an attempt that hangs past
// its timeout, on a live instance, are kept with its claim: the job's next
// occurrence waits for the collection's job limit until the attempt
// returns.
func TestAllowAllHungUnderLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hung := &sideBySide{block: make(chan struct{}), blockOcc: 1}
		e := allowAllEnv(t, hung, scheduler.Config{ActionTimeout: time.Minute, LeaseDuration: 10 * time.Second})
		e.oneAtATime()
		e.start()
		defer e.stop()
		m := time.Minute
		e.put("j", allowAllJob(e.t0.Add(m), `"recurrence": {"frequency": "Minute", "count": 2}`))
		time.Sleep(10 * m)
		synctest.Wait()
		if diff := cmp.Diff([]sideRun{{Occurrence: 1, Start: m}}, hung.attempts()); diff != "" {
			t.Errorf("attempts by 10m while occurrence 1 hangs under a job limit of 1 (-want +got):\n%s", diff)
		}
		close(hung.block)
		synctest.Wait()
		time.Sleep(m)
		synctest.Wait()
		got := hung.attempts()
		if len(got) != 2 || got[1].Occurrence != 2 || got[1].Start < 10*m || hung.maxRuns != 1 {
			t.Errorf("attempts %+v, at most %d at once; want occurrence 2 after 10m, when 1 returned, one at a time", got, hung.maxRuns)
		}
	})
}

// TestAllowAllPutKeepsEnded: a job put again while an older occurrence
// runs and a newer one has faulted keeps what the newer one said: the
// older one, ending after it, does not clear the job's last failure (its
// health stays Failing).
func TestAllowAllPutKeepsEnded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		x := &sideBySide{
			hold: holdOne(1, 3*time.Minute, 0),
			fail: func(req *action.Request) bool { return req.Occurrence == 2 },
		}
		e := allowAllEnv(t, x, scheduler.Config{ActionTimeout: time.Hour})
		e.start()
		defer e.stop()
		m := time.Minute
		e.put("j", allowAllJob(e.t0.Add(m), `"recurrence": {"frequency": "Minute", "count": 2}`))
		// 1 runs from 1m to 4m; 2 faults at 2m.
		time.Sleep(2*m + 30*time.Second)
		synctest.Wait()
		e.put("j", allowAllJob(e.t0.Add(time.Hour), `"recurrence": {"frequency": "Minute", "count": 1}`))
		time.Sleep(3 * m)
		synctest.Wait()
		if n := len(x.attempts()); n != 2 {
			t.Errorf("%d attempts, want 2", n)
		}
		r := e.job("j")
		if !r.Schedule.LastFailed || r.Status.ExecutionCount != 2 || r.Status.FaultedCount != 1 {
			t.Errorf("last failed %v, status %+v; want true (occurrence 2, the newer, faulted), 2 executions, 1 faulted", r.Schedule.LastFailed, r.Status)
		}
	})
}
