package scheduler_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	httpaction "github.com/jobclock/scheduler/action/http"
	"github.com/jobclock/scheduler/store/memory"
)

// attempts is an observer that keeps the attempts that start.
type attempts struct {
	traceParent
	mu  sync.Mutex
	all []scheduler.Attempt
}

func (o *attempts) StartAttempt(ctx context.Context, a scheduler.Attempt) context.Context {
	o.mu.Lock()
	o.all = append(o.all, a)
	o.mu.Unlock()
	return ctx
}

// putLimits replaces collection c of s with one that has limits and room
// for 1000 jobs.
func putLimits(t *testing.T, s *scheduler.Scheduler, limits ...scheduler.Limit) {
	t.Helper()
	if _, err := s.PutCollection(context.Background(), "c", &scheduler.JobCollection{Properties: scheduler.CollectionProperties{
		Quota: &scheduler.Quota{MaxJobCount: 1000}, Limits: limits}}, nil); err != nil {
		t.Fatal(err)
	}
}

// TestLimitConcurrent runs 20 jobs due at once against two hosts of one
// receiver, under a limit of 3 at once per host, with a receiver that takes
// 1 s to answer: no host ever sees more than 3 requests at once, each job
// runs once, the attempts that waited say so in their history and to the
// Observer, and their lateness counts from when they could run (their
// Attempt.Due is after their expected time, within the Scheduler's look
// again after a refusal).
func TestLimitConcurrent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		running, most := map[string]int{}, map[string]int{}
		got := map[string]int{}
		obs := &attempts{}
		var hist []scheduler.HistoryEntry
		s := startPipeScheduler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			running[r.Host]++
			most[r.Host] = max(most[r.Host], running[r.Host])
			got[r.URL.Path]++
			mu.Unlock()
			time.Sleep(time.Second)
			mu.Lock()
			running[r.Host]--
			mu.Unlock()
		}), &httpaction.Options{}, scheduler.Config{Observer: obs, OnHistory: func(h scheduler.HistoryEntry) {
			mu.Lock()
			hist = append(hist, h)
			mu.Unlock()
		}})
		putLimits(t, s, scheduler.Limit{Key: scheduler.LimitHost, MaxConcurrent: 3})
		ctx := context.Background()
		const jobs = 20
		for i := range jobs {
			host := []string{"a.example", "b.example:8080"}[i%2]
			job := mustParse(t, fmt.Sprintf(`{"action": {"type": "Http", "request": {"uri": "http://%s/j%d", "method": "GET"}}}`, host, i))
			if _, err := s.PutJob(ctx, "c", fmt.Sprintf("j%d", i), job, nil); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(time.Minute)
		synctest.Wait()

		mu.Lock()
		defer mu.Unlock()
		for _, host := range []string{"a.example", "b.example:8080"} {
			if most[host] != 3 {
				t.Errorf("%s saw at most %d requests at once, want 3 (the limit, reached)", host, most[host])
			}
		}
		for i := range jobs {
			if n := got[fmt.Sprintf("/j%d", i)]; n != 1 {
				t.Errorf("job j%d ran %d times, want once", i, n)
			}
		}
		waited := 0
		for _, h := range hist {
			if strings.Contains(h.Message, "for the collection's host limit") {
				waited++
				if h.LimitWait() < time.Second || h.LimitWait() > time.Minute {
					t.Errorf("%s waited %v for the host limit by its history entry, want at least the receiver's second", h.Job, h.LimitWait())
				}
			} else if h.LimitWaitMillis != 0 {
				t.Errorf("%s did not wait by its message, but its entry says it waited %v", h.Job, h.LimitWait())
			}
		}
		// 3 of 10 per host run at once: the other 7 wait.
		if waited != 14 {
			t.Errorf("%d history entries say their attempt waited for the host limit, want 14:\n%v", waited, hist)
		}
		obs.mu.Lock()
		defer obs.mu.Unlock()
		withWait := 0
		for _, a := range obs.all {
			if a.LimitWait == 0 {
				if !a.Due.Equal(a.Expected) {
					t.Errorf("attempt of %s did not wait but is due at %v, not its expected time %v", a.Job, a.Due, a.Expected)
				}
				continue
			}
			withWait++
			if a.LimitKey != scheduler.LimitHost || !a.Due.Equal(a.Expected.Add(a.LimitWait)) || a.Start.Sub(a.Due) > time.Second ||
				a.LimitWait < time.Second {
				t.Errorf("attempt of %s waited %v for the %q limit, due %v after its expected time, started %v after that; "+
					"want the host limit, due when it could run, started at once", a.Job, a.LimitWait, a.LimitKey,
					a.Due.Sub(a.Expected), a.Start.Sub(a.Due))
			}
		}
		if withWait != 14 {
			t.Errorf("%d attempts report a wait for a limit, want 14", withWait)
		}
	})
}

// TestLimitRate runs 200 jobs due at once under a limit of 60 a minute for
// the whole collection, and counts the requests in the first minute: 60
// (spaced a second apart from the first), within 10 %; after 200 s every
// job ran once. Retries take permits too: a job whose first attempt fails
// retries under the same rate.
func TestLimitRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var starts []time.Time
		got := map[string]int{}
		s := startPipeScheduler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			starts = append(starts, time.Now())
			got[r.URL.Path]++
			mu.Unlock()
		}), &httpaction.Options{}, scheduler.Config{})
		putLimits(t, s, scheduler.Limit{Key: scheduler.LimitCollection, RatePerMinute: 60})
		ctx := context.Background()
		const jobs = 200
		for i := range jobs {
			job := mustParse(t, fmt.Sprintf(`{"action": {"type": "Http", "request": {"uri": "http://receiver/j%d", "method": "GET"}}}`, i))
			if _, err := s.PutJob(ctx, "c", fmt.Sprintf("j%d", i), job, nil); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(time.Minute - time.Millisecond)
		synctest.Wait()
		mu.Lock()
		inMinute := len(starts)
		mu.Unlock()
		if inMinute < 54 || inMinute > 66 {
			t.Errorf("%d requests in the first minute under a rate of 60 a minute, want 60 within 10 %%", inMinute)
		}
		time.Sleep(150 * time.Second)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		for i := range jobs {
			if n := got[fmt.Sprintf("/j%d", i)]; n != 1 {
				t.Errorf("job j%d ran %d times, want once", i, n)
			}
		}
		for i := 1; i < len(starts); i++ {
			if d := starts[i].Sub(starts[i-1]); d < time.Second {
				t.Errorf("requests %d and %d started %v apart, less than the rate's second", i-1, i, d)
				break
			}
		}
	})
}

// TestLimitRetryTakesPermit: a job limited to 2 attempts a minute whose
// attempts fail retries 15 s after each failure by its policy, but the
// rate holds its retries back: the attempts start 30 s apart, and the
// errorAction (toward its own target, under the same job limit) waits too.
func TestLimitRetryTakesPermit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var starts []time.Duration
		t0 := time.Now()
		s := startPipeScheduler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			starts = append(starts, time.Since(t0))
			mu.Unlock()
			http.Error(w, "no", http.StatusInternalServerError)
		}), &httpaction.Options{}, scheduler.Config{})
		putLimits(t, s, scheduler.Limit{Key: scheduler.LimitJob, RatePerMinute: 2})
		job := mustParse(t, `{"action": {"type": "Http", "request": {"uri": "http://receiver/main", "method": "GET"},
			"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT15S", "retryCount": 2},
			"errorAction": {"type": "Http", "request": {"uri": "http://other/alert", "method": "GET"}, "retryPolicy": {"retryType": "None"}}}}`)
		if _, err := s.PutJob(context.Background(), "c", "j", job, nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		want := []time.Duration{0, 30 * time.Second, 60 * time.Second, 90 * time.Second}
		if len(starts) != len(want) {
			t.Fatalf("attempts started at %v, want %v", starts, want)
		}
		for i, d := range starts {
			if d < want[i] || d > want[i]+time.Second {
				t.Errorf("attempt %d started at %v, want %v (within a second)", i, d, want[i])
			}
		}
	})
}

// deadLimiter is a memory store whose instance can die or stall: while
// dead is set, nothing it asks to claim, extend (its leases, its permits)
// or give back reaches the store, as if its process had gone or its
// network were down; attempts it runs go on.
type deadLimiter struct {
	*memory.Store
	dead atomic.Bool
}

func (d *deadLimiter) ClaimDue(ctx context.Context, now time.Time, owner string, leaseUntil time.Time, limit int) ([]*scheduler.JobRecord, error) {
	if d.dead.Load() {
		return nil, errors.New("dead")
	}
	return d.Store.ClaimDue(ctx, now, owner, leaseUntil, limit)
}

func (d *deadLimiter) ClaimDueBy(ctx context.Context, c scheduler.ClaimRequest) ([]*scheduler.JobRecord, error) {
	if d.dead.Load() {
		return nil, errors.New("dead")
	}
	return d.Store.ClaimDueBy(ctx, c)
}

func (d *deadLimiter) GiveBack(ctx context.Context, owner string, claims []*scheduler.JobRecord) []error {
	errs := make([]error, len(claims))
	if d.dead.Load() {
		for i := range errs {
			errs[i] = errors.New("dead")
		}
		return errs
	}
	return d.Store.GiveBack(ctx, owner, claims)
}

func (d *deadLimiter) ExtendLease(ctx context.Context, collection, name, owner string, until time.Time) error {
	if d.dead.Load() {
		return errors.New("dead")
	}
	return d.Store.ExtendLease(ctx, collection, name, owner, until)
}

func (d *deadLimiter) ExtendLeases(ctx context.Context, owner string, until time.Time, jobs []scheduler.JobKey) []error {
	return extendEach(ctx, d.ExtendLease, owner, until, jobs)
}

func (d *deadLimiter) ExtendPermits(ctx context.Context, holder string, now, until time.Time) (int, error) {
	if d.dead.Load() {
		return 0, errors.New("dead")
	}
	return d.Store.ExtendPermits(ctx, holder, now, until)
}

func (d *deadLimiter) ReleasePermits(ctx context.Context, holder string) error {
	if d.dead.Load() {
		return errors.New("dead")
	}
	return d.Store.ReleasePermits(ctx, holder)
}

// twoInstances returns instances A, on a, and B of one memory store, with
// Executors reg and a LeaseDuration of 30 s, collection c limited to one
// attempt at once per host, and job c/hangs against http://target.example/,
// which A runs: A has started. job is c/hangs' definition.
func twoInstances(t *testing.T, reg *action.Registry) (a *deadLimiter, sa, sb *scheduler.Scheduler, job *scheduler.Job) {
	t.Helper()
	ctx := context.Background()
	shared := memory.New()
	a = &deadLimiter{Store: shared}
	cfg := func(id string) *scheduler.Config {
		return &scheduler.Config{InstanceID: id, Executors: reg, LeaseDuration: 30 * time.Second, Logger: slog.New(slog.DiscardHandler)}
	}
	sa, err := scheduler.New(a, cfg("a"))
	if err != nil {
		t.Fatal(err)
	}
	sb, err = scheduler.New(shared, cfg("b"))
	if err != nil {
		t.Fatal(err)
	}
	putLimits(t, sa, scheduler.Limit{Key: scheduler.LimitHost, MaxConcurrent: 1})
	job = mustParse(t, `{"action": {"type": "Http", "request": {"uri": "http://target.example/", "method": "GET"}}}`)
	if _, err := sa.PutJob(ctx, "c", "hangs", job, nil); err != nil {
		t.Fatal(err)
	}
	if err := sa.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return a, sa, sb, job
}

// TestLimitPermitOfDeadInstance: instance A takes the only permit of a
// host (maxConcurrent 1) for an attempt that hangs, then dies: it extends
// neither its lease nor the permit, nor gives the permit back. Instance
// B's job against the same host waits for it, and runs once the permit's
// lease (LeaseDuration 30 s) expired, not before; B re-claims A's job too
// (which, re-run, does not hang).
func TestLimitPermitOfDeadInstance(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		hang := make(chan struct{})
		started := make(chan string, 4)
		var bStart time.Time
		var hangs atomic.Int32
		reg := new(action.Registry)
		reg.Register(action.HTTP, action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			started <- req.JobID()
			if req.JobID() == "c/hangs" {
				if hangs.Add(1) == 1 {
					<-hang
				}
			} else {
				bStart = time.Now()
			}
			return &action.Result{Message: "ok"}, nil
		}))
		a, sa, sb, job := twoInstances(t, reg)
		if got := <-started; got != "c/hangs" {
			t.Fatalf("%s started first, want c/hangs", got)
		}
		t0 := time.Now()
		a.dead.Store(true)
		if _, err := sb.PutJob(ctx, "c", "waits", job, nil); err != nil {
			t.Fatal(err)
		}
		if err := sb.Start(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		close(hang)
		if err := sb.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		if err := sa.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		if bStart.IsZero() {
			t.Fatalf("B's job never ran: the dead instance's permit did not return")
		}
		if d := bStart.Sub(t0); d < 30*time.Second || d > 32*time.Second {
			t.Errorf("B's job ran %v after A died, want once A's permit expired, 30 s after it was taken (within 2 s)", d)
		}
	})
}

func TestLimitTarget(t *testing.T) {
	tests := []struct {
		name string
		def  string
		want string
	}{
		{"http host and port", `{"type": "Http", "request": {"uri": "https://API.example.com:8443/x?y", "method": "GET"}}`, "api.example.com:8443"},
		{"https default port as written", `{"type": "Http", "request": {"uri": "https://api.example.com:443/x", "method": "GET"}}`, "api.example.com:443"},
		{"https without a port", `{"type": "Http", "request": {"uri": "https://api.example.com/x", "method": "GET"}}`, "api.example.com"},
		{"storage queue", `{"type": "StorageQueue", "queueMessage": {"storageAccount": "Acct", "queueName": "q", "sasToken": "sig=x", "message": "m"}}`, "acct"},
		{"service bus topic", `{"type": "ServiceBusTopic", "serviceBusTopicMessage": {"namespace": "NS", "topicPath": "t", "message": "m",
			"authentication": {"type": "SharedAccessKey", "sasKeyName": "k", "sasKey": "v"}}}`, "ns"},
	}
	for _, tt := range tests {
		job := mustParse(t, `{"action": `+tt.def+`}`)
		if got := scheduler.LimitTarget(&job.Action); got != tt.want {
			t.Errorf("%s: LimitTarget = %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := scheduler.LimitTarget(&action.Action{Type: "Digest"}); got != "Digest" {
		t.Errorf("LimitTarget of a host's type Digest = %q, want the type", got)
	}
}

// TestLimitErrorActionCountsTowardItsTarget: under a host limit of one at
// once, job a's main action (host x) fails at once and its errorAction
// calls host y, where job b's attempt takes 10 s: the errorAction waits for
// y's permit, not x's, and starts once b's attempt ended.
func TestLimitErrorActionCountsTowardItsTarget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		starts := map[string]time.Duration{}
		t0 := time.Now()
		s := startPipeScheduler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			starts[r.Host+r.URL.Path] = time.Since(t0)
			mu.Unlock()
			switch r.URL.Path {
			case "/fail":
				http.Error(w, "no", http.StatusBadRequest)
			case "/slow":
				time.Sleep(10 * time.Second)
			}
		}), &httpaction.Options{}, scheduler.Config{})
		putLimits(t, s, scheduler.Limit{Key: scheduler.LimitHost, MaxConcurrent: 1})
		ctx := context.Background()
		b := mustParse(t, `{"action": {"type": "Http", "request": {"uri": "http://y/slow", "method": "GET"}}}`)
		if _, err := s.PutJob(ctx, "c", "b", b, nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second) // b runs first, and holds y's permit
		a := mustParse(t, `{"action": {"type": "Http", "request": {"uri": "http://x/fail", "method": "GET"}, "retryPolicy": {"retryType": "None"},
			"errorAction": {"type": "Http", "request": {"uri": "http://y/alert", "method": "POST", "body": "x"}, "retryPolicy": {"retryType": "None"}}}}`)
		if _, err := s.PutJob(ctx, "c", "a", a, nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		if d := starts["x/fail"]; d < time.Second || d > 2*time.Second {
			t.Errorf("a's main action (host x, free) started at %v, want at once after it was put at 1s", d)
		}
		if d, ok := starts["y/alert"]; !ok || d < 10*time.Second || d > 12*time.Second {
			t.Errorf("a's errorAction (host y, held by b until 10s) started at %v (%v), want once b's attempt ended", d, ok)
		}
	})
}

// TestLimitPermitOfReclaimedOccurrence: under maxConcurrent 1, instance
// A's attempt stalls past LeaseDuration while A is cut off from the store,
// so that its lease and its permit lapse; instance B re-claims the same
// occurrence and takes the permit. When A's attempt ends at last and A
// gives back its permits, B's permit stays: another job against the host
// waits until B's attempt ended.
func TestLimitPermitOfReclaimedOccurrence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		hangA, hangB := make(chan struct{}), make(chan struct{})
		started := make(chan string, 4)
		var calls atomic.Int32
		reg := new(action.Registry)
		reg.Register(action.HTTP, action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			started <- req.JobID()
			if req.JobID() == "c/hangs" {
				if calls.Add(1) == 1 {
					<-hangA // a stall: the context is not looked at
				} else {
					<-hangB
				}
			}
			return &action.Result{Message: "ok"}, nil
		}))
		a, sa, sb, job := twoInstances(t, reg)
		<-started
		a.dead.Store(true)
		if err := sb.Start(ctx); err != nil {
			t.Fatal(err)
		}
		if got := <-started; got != "c/hangs" {
			t.Fatalf("%s started, want B's attempt of c/hangs", got)
		}
		a.dead.Store(false)
		close(hangA) // A's attempt ends and gives back its permits
		synctest.Wait()
		if _, err := sb.PutJob(ctx, "c", "other", job, nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if len(started) > 0 {
			t.Errorf("%s started while B's attempt of c/hangs ran, want it to wait under maxConcurrent 1: A's release freed B's permit", <-started)
		}
		close(hangB)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if err := sb.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		if err := sa.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		if got := len(started); got != 1 {
			t.Errorf("%d more attempts started after B's, want 1 (c/other, once B's ended)", got)
		}
	})
}

// TestLimitAttemptLosesPermits: instance A's attempt, which holds the only
// permit of a host (maxConcurrent 1), can no longer extend it (A is cut
// off from the store). Before the permit expires (LeaseDuration 30 s
// after it was taken), its context is cancelled, and its history says
// why: past the expiry, another attempt may hold the permit.
func TestLimitAttemptLosesPermits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		started := make(chan string, 4)
		var cancelled time.Time
		reg := new(action.Registry)
		reg.Register(action.HTTP, action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			started <- req.JobID()
			<-ctx.Done()
			cancelled = time.Now()
			return nil, ctx.Err()
		}))
		a, sa, sb, _ := twoInstances(t, reg)
		<-started
		t0 := time.Now()
		a.dead.Store(true)
		time.Sleep(29 * time.Second)
		synctest.Wait()
		a.dead.Store(false) // so that A records the outcome
		if cancelled.IsZero() {
			t.Fatal("the attempt still ran 29 s after it was cut off, its permit about to expire")
		}
		if d := cancelled.Sub(t0); d < 10*time.Second {
			t.Errorf("the attempt was cancelled %v after it was cut off, want once its permit was about to expire (not at the first failed extension)", d)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if err := sa.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		h, err := sb.ListHistory(ctx, "c", "hangs", nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(h) == 0 || h[0].Status != scheduler.StatusFailed || !strings.Contains(h[0].Message, "permits of the collection's limits") {
			t.Errorf("history = %+v, want a failed attempt that says it lost its permits", h)
		}
	})
}

// collectionsDown is a memory store whose GetCollection fails while down
// is set.
type collectionsDown struct {
	*memory.Store
	down atomic.Bool
}

func (c *collectionsDown) GetCollection(ctx context.Context, name string) (*scheduler.CollectionRecord, error) {
	if c.down.Load() {
		return nil, errors.New("down")
	}
	return c.Store.GetCollection(ctx, name)
}

// TestLimitUnknownWaits: an instance that never read a collection, whose
// store fails to give it at first, runs none of its jobs until it knows
// their limits: two jobs under maxConcurrent 1 that take 2 s each never
// run at once.
func TestLimitUnknownWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		shared := memory.New()
		var running, most, ran atomic.Int32
		reg := new(action.Registry)
		reg.Register(action.HTTP, action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			n := running.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			time.Sleep(2 * time.Second)
			running.Add(-1)
			ran.Add(1)
			return &action.Result{Message: "ok"}, nil
		}))
		cfg := &scheduler.Config{Executors: reg, Logger: slog.New(slog.DiscardHandler)}
		admin, err := scheduler.New(shared, cfg)
		if err != nil {
			t.Fatal(err)
		}
		putLimits(t, admin, scheduler.Limit{Key: scheduler.LimitHost, MaxConcurrent: 1})
		job := mustParse(t, `{"action": {"type": "Http", "request": {"uri": "http://target.example/", "method": "GET"}}}`)
		for _, name := range []string{"one", "two"} {
			if _, err := admin.PutJob(ctx, "c", name, job, nil); err != nil {
				t.Fatal(err)
			}
		}
		st := &collectionsDown{Store: shared}
		st.down.Store(true)
		s, err := scheduler.New(st, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * time.Second)
		synctest.Wait()
		st.down.Store(false)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		if ran.Load() != 2 {
			t.Errorf("%d jobs ran, want 2", ran.Load())
		}
		if most.Load() > 1 {
			t.Errorf("%d jobs ran at once, want 1 (maxConcurrent): their limits were taken as none while the collection could not be read", most.Load())
		}
	})
}

// countingLimiter is a memory store that counts its AcquirePermits calls.
type countingLimiter struct {
	*memory.Store
	takes atomic.Int32
}

func (c *countingLimiter) AcquirePermits(ctx context.Context, req scheduler.PermitRequest) (scheduler.PermitGrant, error) {
	c.takes.Add(1)
	return c.Store.AcquirePermits(ctx, req)
}

// TestLimitEmptyAsked: a collection whose limits are an empty list has
// none, and its attempts ask the store for no permits.
func TestLimitEmptyAsked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		st := &countingLimiter{Store: memory.New()}
		var ran atomic.Int32
		reg := new(action.Registry)
		reg.Register(action.HTTP, action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			ran.Add(1)
			return &action.Result{Message: "ok"}, nil
		}))
		s, err := scheduler.New(st, &scheduler.Config{Executors: reg, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		putLimits(t, s, []scheduler.Limit{}...)
		job := mustParse(t, `{"action": {"type": "Http", "request": {"uri": "http://target.example/", "method": "GET"}}}`)
		if _, err := s.PutJob(ctx, "c", "j", job, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		if ran.Load() != 1 {
			t.Errorf("the job ran %d times, want 1", ran.Load())
		}
		if n := st.takes.Load(); n != 0 {
			t.Errorf("AcquirePermits was called %d times, want 0 for \"limits\": []", n)
		}
	})
}
