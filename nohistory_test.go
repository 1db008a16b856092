package scheduler_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/recurrence"
	"github.com/jobclock/scheduler/store/memory"
	"github.com/jobclock/scheduler/store/sqlite"
)

// noHistoryJobs are the jobs of TestNoHistoryKeepsStatesAndCounters, by
// name: each takes a path of the state machine that history entries
// describe (attempts, retries, faults, an error action, postponed and
// skipped occurrences, a pause after faults, the end of a recurrence).
func noHistoryJobs(t0 time.Time) map[string]string {
	at := func(d time.Duration) string { return t0.Add(d).Format(time.RFC3339) }
	act := func(path, extra string) string {
		return `"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/` + path + `", "method": "GET"}` + extra + `}`
	}
	none := `, "retryPolicy": {"retryType": "None"}`
	return map[string]string{
		"once": `{` + act("ok", "") + `, "startTime": "` + at(time.Minute) + `"}`,
		"retries": `{` + act("fail", `, "retryPolicy": {"retryType": "Fixed", "retryInterval": "PT20S", "retryCount": 2},
			"errorAction": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/ok", "method": "POST"}}`) + `}`,
		"count":  `{` + act("ok", "") + `, "startTime": "` + at(time.Minute) + `", "recurrence": {"frequency": "Minute", "count": 3}}`,
		"faults": `{` + act("first", none) + `, "startTime": "` + at(0) + `", "recurrence": {"frequency": "Hour", "count": 2}}`,
		"paused": `{` + act("fail", none) + `, "startTime": "` + at(time.Minute) + `", "recurrence": {"frequency": "Minute"},
			"runPolicy": {"pauseAfterFaults": 2}}`,
		"overlap": `{` + act("slow", "") + `, "startTime": "` + at(time.Minute) + `", "recurrence": {"frequency": "Minute", "count": 4}}`,
		"skipped": `{` + act("ok", "") + `, "startTime": "` + at(-time.Hour) + `", "recurrence": {"frequency": "Minute", "count": 5},
			"runPolicy": {"missed": "Skip"}}`,
	}
}

// noHistoryRun puts noHistoryJobs in a Scheduler with cfg on st, runs it
// for three hours of the bubble's time, and returns the jobs as the
// Scheduler reads them and their stored history.
func noHistoryRun(t *testing.T, st scheduler.Store, cfg scheduler.Config) (jobs map[string]*scheduler.JobRecord, hist map[string][]scheduler.HistoryEntry) {
	t.Helper()
	ctx := context.Background()
	exec := &fake{fn: func(req *action.Request, n int) error {
		switch uri := req.Action.Request.URI; {
		case strings.HasSuffix(uri, "/slow"):
			time.Sleep(90 * time.Second) // the next occurrence comes due meanwhile
		case strings.HasSuffix(uri, "/fail"), strings.HasSuffix(uri, "/first") && req.Occurrence == 1:
			return errors.New("boom")
		}
		return nil
	}}
	reg := &action.Registry{}
	reg.Register(action.HTTP, exec)
	cfg.Executors, cfg.Logger, cfg.MinRetryInterval, cfg.InstanceID = reg, discard, time.Second, "a"
	cfg.ActionTimeout = 2 * time.Minute // the slow attempts outlast a minute
	cfg.PollInterval = time.Hour        // nothing else writes to the store: fewer idle steps
	s, err := scheduler.New(st, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutCollection(ctx, "c", nil, nil); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	defs := noHistoryJobs(t0)
	for name, def := range defs {
		job, err := scheduler.ParseJob([]byte(def), &scheduler.ParseOptions{MinRetryInterval: time.Second})
		if err != nil {
			t.Fatalf("ParseJob(%s): %v", name, err)
		}
		if _, err := s.PutJob(ctx, "c", name, job, nil); err != nil {
			t.Fatalf("PutJob(%s): %v", name, err)
		}
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Hour)
	synctest.Wait()
	jobs, hist = map[string]*scheduler.JobRecord{}, map[string][]scheduler.HistoryEntry{}
	for name := range defs {
		if jobs[name], err = s.GetJob(ctx, "c", name); err != nil {
			t.Fatalf("GetJob(%s): %v", name, err)
		}
		if hist[name], err = s.ListHistory(ctx, "c", name, nil); err != nil {
			t.Fatalf("ListHistory(%s): %v", name, err)
		}
	}
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	return jobs, hist
}

// TestNoHistoryKeepsStatesAndCounters runs the same jobs with history kept
// and with Config.HistoryPerJob NoHistory, and finds the same states,
// statuses and scheduling states, and no history stored: with nothing
// observing the Scheduler (so that it makes no entries at all), and with
// Config.OnHistory set, which gets the entries that history would have
// stored. The memory store runs them, and SQLite once more with OnHistory:
// the setting is the engine's, whatever the store.
func TestNoHistoryKeepsStatesAndCounters(t *testing.T) {
	var want map[string]*scheduler.JobRecord
	var wantHist map[string][]scheduler.HistoryEntry
	synctest.Test(t, func(t *testing.T) {
		want, wantHist = noHistoryRun(t, memory.New(), scheduler.Config{})
	})
	// What the jobs' paths should have led to, so that the comparison
	// below compares something.
	states := map[string]scheduler.JobState{"once": scheduler.JobCompleted, "retries": scheduler.JobFaulted,
		"count": scheduler.JobCompleted, "faults": scheduler.JobCompleted, "paused": scheduler.JobDisabled,
		"overlap": scheduler.JobCompleted, "skipped": scheduler.JobCompleted}
	for name, st := range states {
		if got := want[name].State; got != st {
			t.Errorf("with history: %s is %s, want %s", name, got, st)
		}
	}
	statuses := map[scheduler.ExecutionStatus]bool{}
	for _, h := range wantHist {
		for _, e := range h {
			statuses[e.Status] = true
		}
	}
	if len(statuses) != 4 {
		t.Errorf("with history: the jobs' entries have the statuses %v, want all four", statuses)
	}
	ignore := cmpopts.IgnoreFields(scheduler.JobRecord{}, "ETag", "Incarnation")
	for _, tc := range []struct {
		name     string
		observed bool
		sqlite   bool
	}{{"nothing observes", false, false}, {"OnHistory set", true, false}, {"SQLite, OnHistory set", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			seen := map[string][]scheduler.HistoryEntry{}
			cfg := scheduler.Config{HistoryPerJob: scheduler.NoHistory}
			if tc.observed {
				cfg.OnHistory = func(h scheduler.HistoryEntry) {
					mu.Lock()
					seen[h.Job] = append([]scheduler.HistoryEntry{h}, seen[h.Job]...) // newest first, as ListHistory
					mu.Unlock()
				}
			}
			synctest.Test(t, func(t *testing.T) {
				var st scheduler.Store = memory.New()
				if tc.sqlite {
					sq, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "jobs.db"), nil)
					if err != nil {
						t.Fatal(err)
					}
					defer sq.Close()
					st = sq
				}
				got, hist := noHistoryRun(t, st, cfg)
				for name, w := range want {
					if diff := cmp.Diff(w, got[name], ignore); diff != "" {
						t.Errorf("%s with NoHistory (-with history +without):\n%s", name, diff)
					}
					if len(hist[name]) != 0 {
						t.Errorf("%s with NoHistory has history %+v, want none", name, hist[name])
					}
				}
				if !tc.observed {
					return
				}
				// Each job's last execution is the start of its latest
				// attempt of the main action, as OnHistory told it.
				mu.Lock()
				defer mu.Unlock()
				for name, r := range got {
					i := slices.IndexFunc(seen[name], func(h scheduler.HistoryEntry) bool {
						return h.ActionName == scheduler.MainAction && (h.Status == scheduler.StatusCompleted || h.Status == scheduler.StatusFailed)
					})
					if i < 0 {
						t.Fatalf("%s: no attempt among the entries OnHistory got", name)
					}
					if last := r.Status.LastExecutionTime; last == nil || !last.Equal(seen[name][i].StartTime) {
						t.Errorf("%s with NoHistory: LastExecutionTime %v, want %v, the start of its latest attempt", name, last, seen[name][i].StartTime)
					}
				}
			})
			if !tc.observed {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			// The execution tags are made of each job's incarnation,
			// which each store draws.
			noTags := cmpopts.IgnoreFields(scheduler.HistoryEntry{}, "ExecutionTag")
			for name, w := range wantHist {
				if diff := cmp.Diff(w, seen[name], noTags); diff != "" {
					t.Errorf("%s: OnHistory with NoHistory (-stored with history +got):\n%s", name, diff)
				}
			}
		})
	}
}

// TestNoHistoryConfig checks that NoHistory is the one negative
// HistoryPerJob that New accepts.
func TestNoHistoryConfig(t *testing.T) {
	if _, err := scheduler.New(memory.New(), &scheduler.Config{HistoryPerJob: scheduler.NoHistory}); err != nil {
		t.Errorf("New with HistoryPerJob NoHistory: %v", err)
	}
	_, err := scheduler.New(memory.New(), &scheduler.Config{HistoryPerJob: -2})
	var ce *scheduler.ConfigError
	if !errors.As(err, &ce) || ce.Field != "HistoryPerJob" || !strings.Contains(ce.Reason, "NoHistory") {
		t.Errorf("New with HistoryPerJob -2: %v, want a ConfigError about HistoryPerJob that names NoHistory", err)
	}
}

// TestNoHistoryEnablingLeavesNoSkippedEntry enables a job that was
// Disabled while occurrences passed: with history kept its schedule holds
// the Skipped entry of those occurrences, for the next step to record (at
// once); with NoHistory and nothing observing, the schedule holds none and
// the job is next due at its next occurrence, not sooner.
func TestNoHistoryEnablingLeavesNoSkippedEntry(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cfg    scheduler.Config
		passed bool
	}{{"history kept", scheduler.Config{}, true}, {"NoHistory", scheduler.Config{HistoryPerJob: scheduler.NoHistory}, false}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				cfg := tc.cfg
				cfg.Logger = discard
				s, err := scheduler.New(memory.New(), &cfg)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := s.PutCollection(ctx, "c", nil, nil); err != nil {
					t.Fatal(err)
				}
				job, err := scheduler.ParseJob([]byte(`{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}},
					"state": "Disabled", "recurrence": {"frequency": "Minute"}}`), nil)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := s.PutJob(ctx, "c", "j", job, nil); err != nil {
					t.Fatal(err)
				}
				time.Sleep(10*time.Minute + 30*time.Second)
				r, err := s.PatchJob(ctx, "c", "j", []byte(`{"state": "Enabled"}`), nil)
				if err != nil {
					t.Fatal(err)
				}
				p := r.Schedule.Policy
				if got := p != nil && p.Passed != nil; got != tc.passed {
					t.Errorf("enabled job's schedule holds a Skipped entry: %v, want %v (policy %+v)", got, tc.passed, p)
				}
				want := r.Schedule.NextOccurrence
				if tc.passed {
					want = time.Now() // the entry waits to be recorded
				}
				if !r.Schedule.DueAt.Equal(want) {
					t.Errorf("enabled job is due at %v, want %v", r.Schedule.DueAt, want)
				}
			})
		})
	}
}

// TestNoHistoryAllocationsPerOccurrence runs bursts of one-time jobs due
// at one instant in a Scheduler on the memory store that keeps no history,
// with nothing observing it, and counts what the process allocates from
// the moment the jobs are due until every outcome is recorded, less
// claimAllocs for each claim of the loop. Each occurrence needs two
// allocations today: the attempt's request and context, and the memory
// store's run part of a job when it is first claimed (kept); the instant
// it started (the job's LastExecutionTime) goes in the one its
// NextExecutionTime pointed to, and the execution tag and the request's
// IDs are made only if read. The batches of outcomes and the runtime add
// up to 0.4 more now and then, so the test takes the least of three
// bursts: 2.05 to 2.1 today, and one more allocation per occurrence (a new
// instant for the start, as before) fails the bound.
func TestNoHistoryAllocationsPerOccurrence(t *testing.T) {
	burstAllocations(t, "Noop", 2.6)
}

// claimAllocs is what a claim of the loop allocates on the memory store
// however many jobs it takes: its context (five allocations: see uncut),
// its slice of records and their chunk of the parts a claim fills in. The
// loop claims as many jobs as slots are free, at most MaxConcurrency (100
// in these tests): about 60 claims for a burst of 5,000 jobs, 0.09
// allocations per occurrence. But when every slot is taken, each attempt
// that ends frees one, and under CPU contention (two cores shared with
// other processes, the workers waiting for a processor while the loop,
// woken by the attempt that ended, runs at once) the loop may keep up with
// them and claim one to four jobs at a time: up to about 2,500 claims for
// the same burst, 3.5 allocations per occurrence more, from burst to
// burst. The tests count the claims through the store and leave their
// allocations out.
const claimAllocs = 7

// countedClaims is the memory store whose claims are counted.
type countedClaims struct {
	*memory.Store
	claims atomic.Int64
}

func (c *countedClaims) ClaimDueBy(ctx context.Context, req scheduler.ClaimRequest) ([]*scheduler.JobRecord, error) {
	c.claims.Add(1)
	return c.Store.ClaimDueBy(ctx, req)
}

// TestNoHistoryAllocationsWithDone is TestNoHistoryAllocationsPerOccurrence
// with an executor that calls Done on its context, as the built-in ones do
// (an HTTP request made with it, a trace context read from it): the
// attempt's context then makes a context.WithDeadline, which costs five
// allocations more (the context, its cancel function, its timer, its Done
// channel and its place among its parent's children), 7.05 to 7.1 in all
// today (the least of three bursts, the claims left out). One more (the
// made context kept in an allocation of its own) fails the bound.
func TestNoHistoryAllocationsWithDone(t *testing.T) {
	burstAllocations(t, "Done", 7.6)
}

// burstAllocations runs the bursts of TestNoHistoryAllocationsPerOccurrence
// with jobs of the given action type (see noopNoHistory), and checks that
// the least of them allocated at most most times per occurrence, the
// claims' allocations (claimAllocs each) left out.
func burstAllocations(t *testing.T, actionType action.Type, most float64) {
	const n, bursts = 5000, 3
	if raceBuild {
		// sync.Pool drops a quarter of what is put back under the race
		// detector: a burst's count there runs up to about one allocation
		// per occurrence higher (7.8-8.0 against 7.2-7.4 with Done).
		most++
	}
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		var ran sync.WaitGroup
		st := &countedClaims{Store: memory.New()}
		s := noopNoHistory(t, st, &ran, &scheduler.JobCollection{Properties: scheduler.CollectionProperties{Quota: &scheduler.Quota{MaxJobCount: n * bursts}}})
		least := math.Inf(1)
		for b := range bursts {
			due := time.Now().Add(time.Minute)
			for i := range n {
				def := &scheduler.Job{StartTime: &due, Action: action.Action{Type: actionType, Custom: []byte(`{}`)}}
				if _, err := s.PutJob(ctx, "c", fmt.Sprintf("j%d-%05d", b, i), def, nil); err != nil {
					t.Fatal(err)
				}
			}
			ran.Add(n)
			synctest.Wait() // the loop waits for the due time
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			claims0 := st.claims.Load()
			time.Sleep(time.Until(due))
			ran.Wait()
			time.Sleep(time.Second) // past any linger: the outcomes are recorded
			synctest.Wait()
			runtime.ReadMemStats(&after)
			claims := st.claims.Load() - claims0
			all := float64(after.Mallocs-before.Mallocs) / n
			per := all - float64(claimAllocs*claims)/n
			t.Logf("burst %d: %.2f allocations per occurrence, %.2f with its %d claims, %.1f B", b, per, all, claims, float64(after.TotalAlloc-before.TotalAlloc)/n)
			least = min(least, per)
			for _, name := range []string{fmt.Sprintf("j%d-%05d", b, 0), fmt.Sprintf("j%d-%05d", b, n-1)} {
				r, err := s.GetJob(ctx, "c", name)
				if err != nil {
					t.Fatal(err)
				}
				if r.State != scheduler.JobCompleted || r.Status.ExecutionCount != 1 {
					t.Errorf("job %s after the burst: state %s, %d executions; want Completed, 1", name, r.State, r.Status.ExecutionCount)
				}
			}
		}
		if least > most {
			t.Errorf("bursts of %d occurrences of %s jobs with NoHistory allocated at least %.2f times per occurrence (their claims left out), want at most %.1f", n, actionType, least, most)
		}
		if err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// slowBatches is the memory store whose first RecordBatch waits until
// open is closed.
type slowBatches struct {
	*memory.Store
	open  chan struct{}
	first sync.Once
}

func (s *slowBatches) RecordBatch(ctx context.Context, owner string, batch []scheduler.RecordRequest) []error {
	s.first.Do(func() { <-s.open })
	return s.Store.RecordBatch(ctx, owner, batch)
}

// TestPendingOutcomesMemory checks the memory that the outcomes waiting
// for a slow store take: a burst of n one-time jobs whose first
// RecordBatch waits until every attempt has ended, so that the rest of
// their outcomes wait together. Their 440-byte pending records took about
// 2n of them in a slice grown by doubling (2,800 bytes per occurrence in
// all); in blocks of a store call, n of them (1,600-1,800). The rest is
// the burst's own: each claim's record is new while no outcome has been
// recorded. While the first RecordBatch is held, the outcomes waiting
// leave their workers to the jobs due (fewer than waitingMost of them
// wait), and the lease keeper extends their leases, so that every job
// runs once.
func TestPendingOutcomesMemory(t *testing.T) {
	const n, most = 2000, 2100.0
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, st, ran, due := heldBurst(t, n, scheduler.Config{Logger: discard, HistoryPerJob: scheduler.NoHistory, MaxConcurrency: 100, PollInterval: 250 * time.Millisecond})
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		time.Sleep(time.Until(due))
		for ran.Load() < n && time.Since(due) < scheduler.DefaultLeaseDuration {
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("%d attempts in %v", ran.Load(), time.Since(due))
		close(st.open)
		time.Sleep(time.Second)
		synctest.Wait()
		runtime.ReadMemStats(&after)
		per := float64(after.TotalAlloc-before.TotalAlloc) / n
		t.Logf("%.0f bytes allocated per occurrence", per)
		if per > most {
			t.Errorf("a burst of %d occurrences whose outcomes waited for the store allocated %.0f bytes per occurrence, want at most %.0f", n, per, most)
		}
		if got := ran.Load(); got != n {
			t.Errorf("%d executions of %d one-time jobs, want %d", got, n, n)
		}
		ranOnce(t, st, n)
		if err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// heldBurst returns a Scheduler (not started) with cfg over a slowBatches
// store, whose executor "Noop" counts its attempts in ran, and n one-time
// jobs j00000... of collection "c" (of quota n), due a minute from now.
func heldBurst(t *testing.T, n int, cfg scheduler.Config) (s *scheduler.Scheduler, st *slowBatches, ran *atomic.Int64, due time.Time) {
	t.Helper()
	ctx := context.Background()
	ran = new(atomic.Int64)
	reg := &action.Registry{}
	reg.Register("Noop", action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
		ran.Add(1)
		return nil, nil
	}))
	cfg.Executors = reg
	st = &slowBatches{Store: memory.New(), open: make(chan struct{})}
	s, err := scheduler.New(st, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutCollection(ctx, "c", &scheduler.JobCollection{Properties: scheduler.CollectionProperties{Quota: &scheduler.Quota{MaxJobCount: n}}}, nil); err != nil {
		t.Fatal(err)
	}
	due = time.Now().Add(time.Minute)
	for i := range n {
		def := &scheduler.Job{StartTime: &due, Action: action.Action{Type: "Noop", Custom: []byte(`{}`)}}
		if _, err := s.PutJob(ctx, "c", fmt.Sprintf("j%05d", i), def, nil); err != nil {
			t.Fatal(err)
		}
	}
	return s, st, ran, due
}

// ranOnce checks that each of heldBurst's n jobs ran once and completed.
func ranOnce(t *testing.T, st scheduler.Store, n int) {
	t.Helper()
	for i := range n {
		name := fmt.Sprintf("j%05d", i)
		r, err := st.GetJob(context.Background(), "c", name)
		if err != nil {
			t.Fatal(err)
		}
		if r.State != scheduler.JobCompleted || r.Status.ExecutionCount != 1 {
			t.Errorf("job %s after the burst: state %s, %d executions; want Completed, 1", name, r.State, r.Status.ExecutionCount)
		}
	}
}

// noHistoryTags runs, in a Scheduler with cfg over the memory store, jobs
// whose occurrences the store keeps between attempts: one whose first
// attempt fails and is retried after a delay that derives from the tag
// (Exponential), two due at once in a collection limited to one attempt a
// minute (one of them waits), and one whose slow first attempt ends after
// its second occurrence came due (that one starts as the outcome is
// recorded). It returns the jobs' occurrences in progress as the store
// holds them 70 s and 160 s after they came due, by job ID, and the calls
// their attempts made.
func noHistoryTags(t *testing.T, cfg scheduler.Config) (kept map[string][]*scheduler.Occurrence, calls []call) {
	t.Helper()
	ctx := context.Background()
	exec := &fake{fn: func(req *action.Request, n int) error {
		switch uri := req.Action.Request.URI; {
		case strings.HasSuffix(uri, "/fail-once") && req.Retry == 0:
			return errors.New("boom")
		case strings.HasSuffix(uri, "/slow"):
			time.Sleep(90 * time.Second)
		}
		return nil
	}}
	reg := &action.Registry{}
	reg.Register(action.HTTP, exec)
	cfg.Executors, cfg.Logger, cfg.MinRetryInterval = reg, discard, time.Second
	cfg.ActionTimeout = 2 * time.Minute // the slow attempts outlast a minute
	s, err := scheduler.New(memory.New(), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	limited := &scheduler.JobCollection{Properties: scheduler.CollectionProperties{
		Limits: []scheduler.Limit{{Key: scheduler.LimitCollection, RatePerMinute: 1}}}}
	for name, c := range map[string]*scheduler.JobCollection{"c": nil, "l": limited} {
		if _, err := s.PutCollection(ctx, name, c, nil); err != nil {
			t.Fatal(err)
		}
	}
	due := time.Now().Add(time.Minute).Format(time.RFC3339)
	act := func(path string) string {
		return `"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/` + path + `", "method": "GET"}`
	}
	jobs := map[string]string{
		"c/retry": `{` + act("fail-once") + `, "retryPolicy": {"retryType": "Exponential", "retryCount": 1, "retryInterval": "PT20S", "maximumInterval": "PT1M"}},
			"startTime": "` + due + `"}`,
		"c/slow": `{` + act("slow") + `}, "startTime": "` + due + `", "recurrence": {"frequency": "Minute", "count": 2}}`,
		"l/a":    `{` + act("ok") + `}, "startTime": "` + due + `"}`,
		"l/b":    `{` + act("ok") + `}, "startTime": "` + due + `"}`,
	}
	// In one order, so that each job has the same incarnation, and so the
	// same tags, in every run.
	for _, id := range slices.Sorted(maps.Keys(jobs)) {
		def := jobs[id]
		job, err := scheduler.ParseJob([]byte(def), &scheduler.ParseOptions{MinRetryInterval: time.Second})
		if err != nil {
			t.Fatalf("ParseJob(%s): %v", id, err)
		}
		coll, name, _ := strings.Cut(id, "/")
		if _, err := s.PutJob(ctx, coll, name, job, nil); err != nil {
			t.Fatalf("PutJob(%s): %v", id, err)
		}
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	kept = map[string][]*scheduler.Occurrence{}
	for _, d := range []time.Duration{70 * time.Second, 90 * time.Second} {
		time.Sleep(d)
		synctest.Wait()
		for id := range jobs {
			coll, name, _ := strings.Cut(id, "/")
			r, err := s.GetJob(ctx, coll, name)
			if err != nil {
				t.Fatalf("GetJob(%s): %v", id, err)
			}
			if o := r.Schedule.Current; o != nil {
				kept[id] = append(kept[id], o)
			}
		}
	}
	time.Sleep(5 * time.Minute)
	synctest.Wait()
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	exec.mu.Lock()
	defer exec.mu.Unlock()
	return kept, exec.calls
}

// TestNoHistoryKeepsOccurrenceTags checks that with Config.HistoryPerJob
// NoHistory and nothing observing the Scheduler, which then makes an
// occurrence's execution tag only when something reads it, an occurrence
// kept in the store between attempts has its tag, a retry's delay that
// derives from the tag is the same, and every attempt's request gives the
// tag of its occurrence, also to an executor that reads it only after the
// attempt: the same tags and attempts as with history kept.
func TestNoHistoryKeepsOccurrenceTags(t *testing.T) {
	type attempt struct {
		At  time.Time
		Tag string
	}
	run := func(kept map[string][]*scheduler.Occurrence, calls []call) map[string][]attempt {
		t.Helper()
		got := map[string][]attempt{} // by job ID and occurrence number
		for _, c := range calls {
			key := fmt.Sprintf("%s#%d", c.req.JobID(), c.req.Occurrence)
			tag := c.req.ExecutionTag()
			if prev := got[key]; tag == "" || len(prev) > 0 && prev[0].Tag != tag {
				t.Errorf("attempt %d of %s has execution tag %q, want that of the occurrence's other attempts, %v", c.req.Retry, key, tag, prev)
			}
			at := c.at
			if strings.HasPrefix(key, "l/") {
				at = time.Time{} // which of the two waits is open
			}
			got[key] = append(got[key], attempt{at, tag})
		}
		waits, retries, started := 0, 0, 0
		for id, os := range kept {
			for _, o := range os {
				key := fmt.Sprintf("%s#%d", id, o.Number)
				if a := got[key]; o.Tag == "" || len(a) == 0 || o.Tag != a[0].Tag {
					t.Errorf("%s: the occurrence kept in the store has execution tag %q, want its attempts', %v", key, o.Tag, a)
				}
				switch {
				case o.Limited != nil:
					waits++
				case o.Retry > 0:
					retries++
				case o.Number == 2:
					started++
				}
			}
		}
		if waits != 1 || retries != 1 || started != 1 {
			t.Errorf("the store held %d occurrences waiting for a limit, %d retries and %d second occurrences, want one each: %v", waits, retries, started, kept)
		}
		return got
	}
	var want, got map[string][]attempt
	synctest.Test(t, func(t *testing.T) { want = run(noHistoryTags(t, scheduler.Config{})) })
	synctest.Test(t, func(t *testing.T) {
		got = run(noHistoryTags(t, scheduler.Config{HistoryPerJob: scheduler.NoHistory}))
	})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("attempts with NoHistory (-with history +without):\n%s", diff)
	}
}

// TestRecurringAllocationsPerOccurrence runs jobs that recur every second
// in a Scheduler on the memory store that keeps no history, and counts what
// the process allocates per occurrence over seconds after the first (each
// job has run once, so its record has a last execution time). An
// occurrence writes the job's LastExecutionTime and NextExecutionTime in
// the instants its claimed record points to already, and allocates what a
// one-time job's does but the run part (which a job that ran has): the
// attempt's request and context. The claims' chunks, the batches and the
// runtime add 0.1 to 0.9 (1.1 to 1.9 today); a new instant for either
// time in each step, as before (three more per occurrence: the claim's
// step, the outcome, the step after it: 4.23), fails the bound.
func TestRecurringAllocationsPerOccurrence(t *testing.T) {
	const n, seconds, most = 2000, 3, 2.5
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		var ran sync.WaitGroup
		s := noopNoHistory(t, memory.New(), &ran, &scheduler.JobCollection{Properties: scheduler.CollectionProperties{Quota: &scheduler.Quota{MaxJobCount: n,
			MaxRecurrence: &scheduler.MaxRecurrence{Frequency: recurrence.Second, Interval: 1}}}})
		t0 := time.Now().Add(time.Minute).Truncate(time.Second)
		for i := range n {
			def := &scheduler.Job{StartTime: &t0, Action: action.Action{Type: "Noop", Custom: []byte(`{}`)},
				Recurrence: &recurrence.Recurrence{Frequency: recurrence.Second, Count: seconds + 2}}
			if _, err := s.PutJob(ctx, "c", fmt.Sprintf("j%05d", i), def, nil); err != nil {
				t.Fatal(err)
			}
		}
		ran.Add(n)
		time.Sleep(time.Until(t0.Add(time.Second / 2)))
		ran.Wait() // every job ran once
		synctest.Wait()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		ran.Add(n * seconds)
		time.Sleep(time.Until(t0.Add(seconds*time.Second + time.Second/2)))
		ran.Wait()
		synctest.Wait() // the outcomes are recorded
		runtime.ReadMemStats(&after)
		per := float64(after.Mallocs-before.Mallocs) / (n * seconds)
		t.Logf("%.2f allocations per occurrence", per)
		if per > most {
			t.Errorf("jobs recurring every second with NoHistory allocated %.2f times per occurrence, want at most %.1f", per, most)
		}
		r, err := s.GetJob(ctx, "c", "j00000")
		if err != nil {
			t.Fatal(err)
		}
		want := t0.Add(seconds * time.Second) // the last occurrence that ran
		if last, next := r.Status.LastExecutionTime, r.Status.NextExecutionTime; r.Status.ExecutionCount != seconds+1 || last == nil || next == nil ||
			last.Before(want) || !last.Before(want.Add(time.Second/2)) || !next.Equal(want.Add(time.Second)) {
			t.Errorf("after %d occurrences: %d executions, last %v, next %v; want %[1]d, %v or a little later, %v", seconds+1, r.Status.ExecutionCount, last, next, want, want.Add(time.Second))
		}
		if err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// noopNoHistory returns a started Scheduler on st (the memory store) that
// keeps no history, with nothing observing it, whose action type Noop
// calls ran.Done and succeeds, as does Done after calling its context's
// Done, and that holds collection "c" as col defines it.
func noopNoHistory(t *testing.T, st scheduler.Store, ran *sync.WaitGroup, col *scheduler.JobCollection) *scheduler.Scheduler {
	t.Helper()
	ctx := context.Background()
	reg := &action.Registry{}
	reg.Register("Noop", action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
		ran.Done()
		return nil, nil
	}))
	reg.Register("Done", action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
		ctx.Done()
		ran.Done()
		return nil, nil
	}))
	s, err := scheduler.New(st, &scheduler.Config{Executors: reg, Logger: discard, HistoryPerJob: scheduler.NoHistory, MaxConcurrency: 100})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutCollection(ctx, "c", col, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}
