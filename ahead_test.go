package scheduler_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/internal/syncbuf"
	"github.com/jobclock/scheduler/store/memory"
)

// claimCounter is a memory store that counts ClaimDue, ClaimDueBy and
// RecordBatch calls.
type claimCounter struct {
	*memory.Store
	claims, batches atomic.Int64
	slow            time.Duration // how long RecordBatch and GiveBack take
	// waited is the longest an outcome recorded by RecordBatch waited,
	// from the end of its attempt to the start of the call.
	waited atomic.Int64
}

func (c *claimCounter) ClaimDueBy(ctx context.Context, req scheduler.ClaimRequest) ([]*scheduler.JobRecord, error) {
	c.claims.Add(1)
	return c.Store.ClaimDueBy(ctx, req)
}

func (c *claimCounter) GiveBack(ctx context.Context, owner string, claims []*scheduler.JobRecord) []error {
	time.Sleep(c.slow)
	return c.Store.GiveBack(ctx, owner, claims)
}

func (c *claimCounter) RecordBatch(ctx context.Context, owner string, batch []scheduler.RecordRequest) []error {
	c.batches.Add(1)
	now := time.Now()
	for _, r := range batch {
		for _, h := range r.History {
			if w := int64(now.Sub(h.EndTime)); w > c.waited.Load() {
				c.waited.Store(w)
			}
		}
	}
	time.Sleep(c.slow)
	return c.Store.RecordBatch(ctx, owner, batch)
}

func (c *claimCounter) ClaimDue(ctx context.Context, now time.Time, owner string, leaseUntil time.Time, limit int) ([]*scheduler.JobRecord, error) {
	c.claims.Add(1)
	return c.Store.ClaimDue(ctx, now, owner, leaseUntil, limit)
}

// premiumCounted returns an env with cfg over a claimCounter whose
// RecordBatch and GiveBack take slow, with collection "c" put premium
// (its quota takes the hundreds of jobs that the tests put).
func premiumCounted(t *testing.T, cfg scheduler.Config, slow time.Duration) (*env, *claimCounter) {
	t.Helper()
	e := newEnv(t, cfg)
	st := &claimCounter{Store: e.store, slow: slow}
	e.over(st)
	coll := &scheduler.JobCollection{}
	coll.Properties.SKU = &scheduler.SKU{Name: scheduler.SKUP20Premium}
	if _, err := e.s.PutCollection(context.Background(), "c", coll, nil); err != nil {
		t.Fatal(err)
	}
	return e, st
}

// startBefore starts the Scheduler a second before first, once the
// puts before it are done.
func (e *env) startBefore(first time.Time) {
	synctest.Wait()
	time.Sleep(time.Until(first.Add(-time.Second)))
	e.start()
}

// oneTimeAt is a one-time job due at start, to the millisecond.
func oneTimeAt(start time.Time) string {
	return `{"action": ` + hello + `}, "startTime": "` + start.UTC().Format(time.RFC3339Nano) + `"}`
}

// TestClaimAheadStartsOnTime: 200 one-time jobs due 5 ms apart each start
// at their due instant, none earlier; claimed ahead, they take a few
// claims for all of them (the loop claims every half ClaimAhead: about 44
// claims at 50ms, 24 at 100ms, the default; an outcome recorded while a
// claim was under way used to add one more, which under load came to 70,
// see TestOutcomeDuringClaimNoExtraClaim), where
// claiming each once it is due takes one claim per job or more, and their
// outcomes are recorded several at a time (an outcome waits up to
// ClaimAhead for the next ones while claims held ahead start).
func TestClaimAheadStartsOnTime(t *testing.T) {
	for _, tt := range []struct {
		name       string
		ahead      time.Duration
		fewClaims  int // the most claims expected; 0: no bound
		manyClaims int // the fewest claims expected
		batches    int // the most record batches expected
	}{
		{name: "50ms", ahead: 50 * time.Millisecond, fewClaims: 60, batches: 110},
		{name: "100ms", ahead: 100 * time.Millisecond, fewClaims: 32, batches: 16},
		{name: "default", fewClaims: 32, batches: 16},
		{name: "none", ahead: scheduler.NoClaimAhead, manyClaims: 200, batches: 200},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e, st := premiumCounted(t, scheduler.Config{ClaimAhead: tt.ahead}, 0)
				const n = 200
				first := e.putEvery(n, 5*time.Millisecond)
				e.startBefore(first)
				defer e.stop()
				before, batches := st.claims.Load(), st.batches.Load()
				time.Sleep(2*time.Second + 100*time.Millisecond) // past the last outcome's linger
				synctest.Wait()
				claims := int(st.claims.Load() - before)
				if b := int(st.batches.Load() - batches); b > tt.batches {
					t.Errorf("%d record batches for %d outcomes 5 ms apart, want at most %d", b, n, tt.batches)
				}
				e.mu.Lock()
				if len(e.hist) != n {
					t.Errorf("%d history entries, want %d", len(e.hist), n)
				}
				e.mu.Unlock()
				reqs := e.exec.calls
				if len(reqs) != n {
					t.Fatalf("%d attempts, want %d", len(reqs), n)
				}
				for _, c := range reqs {
					if !c.at.Equal(c.req.ExpectedTime) {
						t.Errorf("%s started at %v, due at %v", c.req.JobID(), c.at.Sub(first), c.req.ExpectedTime.Sub(first))
					}
				}
				if tt.fewClaims > 0 && claims > tt.fewClaims {
					t.Errorf("%d claims for %d jobs due 5 ms apart, want at most %d", claims, n, tt.fewClaims)
				}
				if claims < tt.manyClaims {
					t.Errorf("%d claims for %d jobs due 5 ms apart, want at least %d", claims, n, tt.manyClaims)
				}
			})
		})
	}
}

// slowClaim is a memory store whose claim at slowAt (the loop's instant,
// to the nanosecond) takes slow, and that keeps the instants of the claims.
type slowClaim struct {
	*memory.Store
	slowAt time.Time
	slow   time.Duration
	mu     sync.Mutex
	at     []time.Time
}

func (c *slowClaim) ClaimDueBy(ctx context.Context, req scheduler.ClaimRequest) ([]*scheduler.JobRecord, error) {
	c.mu.Lock()
	c.at = append(c.at, req.Now)
	c.mu.Unlock()
	if req.Now.Equal(c.slowAt) {
		time.Sleep(c.slow)
	}
	return c.Store.ClaimDueBy(ctx, req)
}

// TestOutcomeDuringClaimNoExtraClaim: the loop starts j1 at its instant T
// and claims at once (j2 is due four fifths of ClaimAhead later, beyond
// the claim before T), and the claim takes 20 ms;
// j1's outcome is recorded meanwhile. The claim asked for every free slot,
// and j1 is not due again: the outcome must not make the loop claim again
// as soon as the claim returns, but at its cadence, half ClaimAhead after
// T.
func TestOutcomeDuringClaimNoExtraClaim(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{ClaimAhead: scheduler.DefaultClaimAhead})
		due := e.t0.Add(10 * time.Second).Truncate(time.Second)
		st := &slowClaim{Store: e.store, slowAt: due, slow: 20 * time.Millisecond}
		e.over(st)
		e.put("j1", oneTimeAt(due))
		e.put("j2", oneTimeAt(due.Add(scheduler.DefaultClaimAhead*4/5)))
		e.start()
		defer e.stop()
		time.Sleep(time.Until(due.Add(time.Second)))
		synctest.Wait()
		if n := len(e.exec.calls); n != 2 {
			t.Fatalf("%d attempts, want 2", n)
		}
		st.mu.Lock()
		defer st.mu.Unlock()
		var during []time.Duration // the claims from T until half ClaimAhead after it
		for _, at := range st.at {
			if d := at.Sub(due); d >= 0 && d < scheduler.DefaultClaimAhead/2 {
				during = append(during, d)
			}
		}
		if len(during) != 1 || during[0] != 0 {
			t.Errorf("claims at %v after T, want one, at T", during)
		}
	})
}

// TestClaimAheadSteadyBatches: at a steady rate, one outcome a
// millisecond, over a store that takes 2 ms a RecordBatch, the outcomes
// are recorded at least four fifths of a linger's worth at a time (the
// linger is ClaimAhead: 100 ms by default, so 80 or more),
// not one or two at a time behind each store call; none waits
// longer than the linger for the call that records it; and Stop, called
// while outcomes linger, returns once every one is recorded.
func TestClaimAheadSteadyBatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, st := premiumCounted(t, scheduler.Config{ClaimAhead: scheduler.DefaultClaimAhead}, 2*time.Millisecond)
		const n = 500
		first := e.putEvery(n, time.Millisecond)
		e.startBefore(first)
		time.Sleep(time.Until(first.Add(n * time.Millisecond)))
		e.stop()
		most := int64(n / (scheduler.DefaultClaimAhead * 4 / 5 / time.Millisecond))
		if b := st.batches.Load(); b > most {
			t.Errorf("%d record batches for %d outcomes 1 ms apart, want at most %d", b, n, most)
		}
		if w, linger := time.Duration(st.waited.Load()), scheduler.DefaultClaimAhead; w > linger {
			t.Errorf("an outcome waited %v for its record, want at most the linger, %v", w, linger)
		}
		e.mu.Lock()
		defer e.mu.Unlock()
		if len(e.hist) != n {
			t.Errorf("%d history entries after Stop, want %d", len(e.hist), n)
		}
	})
}

// TestClaimAheadFullRate: at 4,000 jobs a second, where the jobs due
// within ClaimAhead (400) are more than MaxConcurrency (100) leaves to
// hold, every job still starts on time, none before its instant, and the claims
// stay batches: at most one claim for every 20 jobs, where claiming again
// as each slot frees takes a claim for every one or two jobs.
func TestClaimAheadFullRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, st := premiumCounted(t, scheduler.Config{}, 0)
		const n = 1000 // the collection's quota
		first := e.putEvery(n, 250*time.Microsecond)
		e.startBefore(first)
		defer e.stop()
		before := st.claims.Load()
		time.Sleep(time.Until(first.Add(time.Second)))
		synctest.Wait()
		if claims := st.claims.Load() - before; claims > n/20 {
			t.Errorf("%d claims for %d jobs due 250µs apart, want at most %d", claims, n, n/20)
		}
		e.exec.mu.Lock()
		defer e.exec.mu.Unlock()
		if len(e.exec.calls) != n {
			t.Fatalf("%d attempts, want %d", len(e.exec.calls), n)
		}
		for _, c := range e.exec.calls {
			if late := c.at.Sub(c.req.ExpectedTime); late < 0 || late > 2*time.Millisecond {
				t.Errorf("%s started %v after its instant, want 0 to 2ms (see TestClaimAheadStartsTogether)", c.req.JobID(), late)
			}
		}
	})
}

// TestClaimAheadCutWriteDueNow: a job written due now just after a claim
// that MaxConcurrency cut short took every slot starts at the first slot
// freed (the next held job's start), not when the loop would claim next
// (halfway to its last held claim): 10 slots, jobs due 50 ms apart claimed
// a second ahead, and a job due now written right after each of ten such
// claims.
func TestClaimAheadCutWriteDueNow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const spacing = 50 * time.Millisecond
		e, st := premiumCounted(t, scheduler.Config{MaxConcurrency: 10, ClaimAhead: time.Second}, 0)
		first := e.putEvery(200, spacing)
		e.startBefore(first)
		defer e.stop()
		time.Sleep(time.Until(first.Add(time.Second)))
		written := map[string]bool{}
		for i := range 10 {
			n := st.claims.Load()
			for st.claims.Load() == n {
				time.Sleep(time.Millisecond)
			}
			synctest.Wait() // the claim's step is done: every slot held
			name := fmt.Sprintf("now%d", i)
			written[name] = true
			e.put(name, oneTimeAt(time.Now()))
			time.Sleep(300 * time.Millisecond)
		}
		synctest.Wait()
		e.exec.mu.Lock()
		defer e.exec.mu.Unlock()
		started := 0
		for _, c := range e.exec.calls {
			if !written[c.req.JobID()[strings.LastIndexByte(c.req.JobID(), '/')+1:]] {
				continue
			}
			started++
			// The next held job starts (and ends at once) at most one
			// spacing after the write, freeing its slot.
			if late := c.at.Sub(c.req.ExpectedTime); late > spacing+2*time.Millisecond {
				t.Errorf("%s, written due now, started %v late, want at most %v (a slot was freed before then)", c.req.JobID(), late, spacing+2*time.Millisecond)
			}
		}
		if started != len(written) {
			t.Fatalf("%d of the %d jobs written due now started", started, len(written))
		}
	})
}

// TestClaimAheadSlowRecords: while the outcomes of earlier jobs wait for a
// slow store (60 ms a batch), taking most of MaxConcurrency's slots, the
// jobs claimed ahead still start on time: held claims do not count as in
// flight until they start.
func TestClaimAheadSlowRecords(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{MaxConcurrency: 20, ClaimAhead: scheduler.DefaultClaimAhead})
		st := &claimCounter{Store: e.store, slow: 60 * time.Millisecond}
		e.over(st)
		const n = 45
		first := e.putEvery(n, 5*time.Millisecond)
		e.start()
		defer e.stop()
		time.Sleep(time.Until(first.Add(time.Second)))
		synctest.Wait()
		if len(e.exec.calls) != n {
			t.Fatalf("%d attempts, want %d", len(e.exec.calls), n)
		}
		for _, c := range e.exec.calls {
			if !c.at.Equal(c.req.ExpectedTime) {
				t.Errorf("%s started %v late", c.req.JobID(), c.at.Sub(c.req.ExpectedTime))
			}
		}
	})
}

// TestClaimAheadStartsTogether: held claims due within Config.FiringWindow
// of the earliest start together, from one wake-up of the loop, at the
// instant of the last of them: of 20 jobs due 1 ms apart, none starts
// before its instant or more than the window after it, and they start at
// no more instants than one for each window's worth of them and two more
// (where a claim wakes the loop between them); with NoFiringWindow each
// starts at its own instant. A held claim with none due within the window
// after it starts at its instant.
func TestClaimAheadStartsTogether(t *testing.T) {
	for _, tt := range []struct {
		name   string
		window time.Duration // Config.FiringWindow
		want   time.Duration // the window in effect; 0: none
	}{
		{name: "none", window: scheduler.NoFiringWindow},
		{name: "default", want: scheduler.DefaultFiringWindow},
		{name: "1ms", window: time.Millisecond, want: time.Millisecond},
		{name: "5ms", window: 5 * time.Millisecond, want: 5 * time.Millisecond},
		{name: "10ms", window: 10 * time.Millisecond, want: 10 * time.Millisecond},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, scheduler.Config{ClaimAhead: scheduler.DefaultClaimAhead, FiringWindow: tt.window})
				first := e.t0.Add(10 * time.Second).Truncate(time.Second)
				const dense = 20 // 1 ms apart
				lone := []time.Duration{50 * time.Millisecond, 70 * time.Millisecond}
				for i := range dense {
					e.put(jobName(i), oneTimeAt(first.Add(time.Duration(i)*time.Millisecond)))
				}
				for i, d := range lone {
					e.put(jobName(dense+i), oneTimeAt(first.Add(d)))
				}
				e.start()
				defer e.stop()
				time.Sleep(time.Until(first.Add(time.Second)))
				synctest.Wait()
				e.exec.mu.Lock()
				defer e.exec.mu.Unlock()
				if n := dense + len(lone); len(e.exec.calls) != n {
					t.Fatalf("%d attempts, want %d", len(e.exec.calls), n)
				}
				starts := map[time.Time]bool{} // of the dense jobs
				for _, c := range e.exec.calls {
					late := c.at.Sub(c.req.ExpectedTime)
					if c.req.ExpectedTime.Sub(first) >= lone[0] {
						if late != 0 {
							t.Errorf("%s, alone, started %v after its instant, want at it", c.req.JobID(), late)
						}
						continue
					}
					starts[c.at] = true
					if late < 0 || late > tt.want {
						t.Errorf("%s started %v after its instant, want 0 to %v", c.req.JobID(), late, tt.want)
					}
				}
				per := int(tt.want/time.Millisecond) + 1 // jobs due within a window
				most := (dense+per-1)/per + 2
				if tt.want == 0 {
					most = dense
				}
				if len(starts) > most {
					t.Errorf("%d jobs due 1 ms apart started at %d instants, want at most %d", dense, len(starts), most)
				}
			})
		})
	}
}

// putEvery puts n one-time jobs due every d from the first whole second
// 10 s after e.t0, and returns when the first is due.
func (e *env) putEvery(n int, d time.Duration) time.Time {
	first := e.t0.Add(10 * time.Second).Truncate(time.Second)
	for i := range n {
		e.put(jobName(i), oneTimeAt(first.Add(time.Duration(i)*d)))
	}
	return first
}

func jobName(i int) string {
	return "j" + string(rune('a'+i/100%26)) + string(rune('a'+i/10%10)) + string(rune('a'+i%10))
}

// TestClaimAheadWriteWins: a write through the Scheduler to a job whose
// occurrence is claimed ahead of its due instant (held) wins over it: a
// disable, a delete or a put of another start time means that nothing runs
// at the old instant, a run now runs at once, and a disabled collection
// runs nothing. The job's lease is given back.
func TestClaimAheadWriteWins(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name  string
		write func(e *env, due time.Time) error
		want  []time.Duration // attempt starts, from due
	}{
		{name: "none", write: func(*env, time.Time) error { return nil }, want: []time.Duration{0}},
		{name: "disable", write: func(e *env, _ time.Time) error {
			_, err := e.s.DisableJob(ctx, "c", "j")
			return err
		}},
		{name: "delete", write: func(e *env, _ time.Time) error { return e.s.DeleteJob(ctx, "c", "j", nil) }},
		{name: "put later", write: func(e *env, due time.Time) error {
			job, err := scheduler.ParseJob([]byte(oneTimeAt(due.Add(time.Minute))), nil)
			if err == nil {
				_, err = e.s.PutJob(ctx, "c", "j", job, nil)
			}
			return err
		}, want: []time.Duration{time.Minute}},
		{name: "run now", write: func(e *env, _ time.Time) error {
			_, err := e.s.RunJob(ctx, "c", "j")
			return err
		}, want: []time.Duration{-20 * time.Millisecond, 0}},
		{name: "disable collection", write: func(e *env, _ time.Time) error {
			_, err := e.s.PatchCollection(ctx, "c", []byte(`{"properties": {"state": "Disabled"}}`), nil)
			return err
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, scheduler.Config{ClaimAhead: scheduler.DefaultClaimAhead})
				due := e.t0.Add(10 * time.Second).Truncate(time.Second)
				e.put("j", oneTimeAt(due))
				e.start()
				defer e.stop()
				time.Sleep(time.Until(due.Add(-20 * time.Millisecond)))
				synctest.Wait()
				if r := e.job("j"); r.LeaseOwner == "" {
					t.Fatalf("the job is not leased 20 ms before it is due, want its claim held")
				}
				if err := tt.write(e, due); err != nil {
					t.Fatal(err)
				}
				synctest.Wait()
				if tt.name != "none" && tt.name != "run now" && tt.name != "delete" {
					if r := e.job("j"); r.LeaseOwner != "" {
						t.Errorf("after the write, before the due instant, the job is leased to %q, want no lease", r.LeaseOwner)
					}
				}
				time.Sleep(2 * time.Minute)
				synctest.Wait()
				var got []time.Duration
				for _, c := range e.exec.calls {
					got = append(got, c.at.Sub(due))
				}
				if len(got) != len(tt.want) {
					t.Fatalf("attempts at %v from the due instant, want %v", got, tt.want)
				}
				for i := range got {
					if got[i] != tt.want[i] {
						t.Errorf("attempts at %v from the due instant, want %v", got, tt.want)
						break
					}
				}
			})
		})
	}
}

// TestClaimAheadStopGivesBack: Stop gives back the claims held ahead of
// their instants: the jobs are not leased once Stop returns, and another
// Scheduler over the store runs each once, on time (5 ms apart, each starts
// at its instant: see TestClaimAheadStartsTogether).
func TestClaimAheadStopGivesBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{ClaimAhead: scheduler.DefaultClaimAhead})
		due := e.t0.Add(10 * time.Second).Truncate(time.Second)
		for i := range 5 {
			e.put(jobName(i), oneTimeAt(due.Add(time.Duration(i)*5*time.Millisecond)))
		}
		e.start()
		time.Sleep(time.Until(due.Add(-10 * time.Millisecond)))
		synctest.Wait()
		for i := range 5 {
			if r := e.job(jobName(i)); r.LeaseOwner == "" {
				t.Fatalf("%s is not leased 10 ms before it is due, want its claim held", r.Name)
			}
		}
		e.stop()
		for i := range 5 {
			if r := e.job(jobName(i)); r.LeaseOwner != "" {
				t.Errorf("%s is leased to %q after Stop, want no lease", r.Name, r.LeaseOwner)
			}
		}
		e.cfg.InstanceID = "second"
		e.s = e.newScheduler()
		e.start()
		defer e.stop()
		time.Sleep(time.Second)
		synctest.Wait()
		if len(e.exec.calls) != 5 {
			t.Fatalf("%d attempts, want 5", len(e.exec.calls))
		}
		for _, c := range e.exec.calls {
			if !c.at.Equal(c.req.ExpectedTime) {
				t.Errorf("%s started %v after its due instant, want on time", c.req.JobID(), c.at.Sub(c.req.ExpectedTime))
			}
		}
	})
}

// TestClaimAheadWithinMaxConcurrency: two instances, MaxConcurrency 1
// each, share three one-time jobs due at one instant whose attempts run
// 30 s, three times the lease: an instance claims no more jobs than it has
// free slots, so no claim waits unleased for a worker while the other
// instance takes it over, and each job runs once.
func TestClaimAheadWithinMaxConcurrency(t *testing.T) {
	for _, ahead := range []time.Duration{scheduler.DefaultClaimAhead, scheduler.NoClaimAhead} {
		t.Run(fmt.Sprint(ahead), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				st := memory.New()
				var mu sync.Mutex
				calls := map[string]int{}
				reg := &action.Registry{}
				reg.Register(action.HTTP, action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
					mu.Lock()
					calls[req.JobID()]++
					mu.Unlock()
					time.Sleep(30 * time.Second) // ignores its context
					return nil, nil
				}))
				cfg := scheduler.Config{Executors: reg, MaxConcurrency: 1, LeaseDuration: 10 * time.Second,
					ActionTimeout: time.Minute, ClaimAhead: ahead, Logger: slog.New(slog.DiscardHandler)}
				ctx := context.Background()
				ss := instances(t, st, cfg, "a", "b")
				due := time.Now().Add(10 * time.Second).Truncate(time.Second)
				for i := range 3 {
					job, err := scheduler.ParseJob([]byte(oneTimeAt(due)), nil)
					if err != nil {
						t.Fatal(err)
					}
					if _, err := ss[0].PutJob(ctx, "c", jobName(i), job, nil); err != nil {
						t.Fatal(err)
					}
				}
				for _, s := range ss {
					if err := s.Start(ctx); err != nil {
						t.Fatal(err)
					}
				}
				time.Sleep(3 * time.Minute)
				synctest.Wait()
				for _, s := range ss {
					if err := s.Stop(ctx); err != nil {
						t.Fatal(err)
					}
				}
				mu.Lock()
				defer mu.Unlock()
				if len(calls) != 3 {
					t.Errorf("attempts by job %v, want one for each of 3 jobs", calls)
				}
				for job, n := range calls {
					if n != 1 {
						t.Errorf("%d attempts of %s, want 1", n, job)
					}
				}
			})
		})
	}
}

// TestClaimAheadStopHonoursContext: while the store hangs on the give-back
// of the held claims, Stop returns once its context ends, with the
// context's error.
func TestClaimAheadStopHonoursContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{ClaimAhead: scheduler.DefaultClaimAhead})
		e.over(&claimCounter{Store: e.store, slow: 10 * time.Second})
		e.startHolding()
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		start := time.Now()
		err := e.s.Stop(ctx)
		if took := time.Since(start); took != 100*time.Millisecond || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Stop returned %v after %v while the store hangs, want %v after 100ms", err, took, context.DeadlineExceeded)
		}
		time.Sleep(10 * time.Second) // the store answers; the rest of Stop's work ends
		synctest.Wait()
	})
}

// TestClaimAheadLingerDueAgain: an outcome whose job is due again within
// the linger (500 ms, for a ClaimAhead of 500 ms) is recorded at once rather
// than left to linger with others, so that its next occurrence starts on
// time. Job b, every second, runs its first attempt for run; job a, one
// time at aAt, runs at once; job c, one time at cAt, is held meanwhile.
// "lingering": a's outcome, 50 ms before b's, lingers for c's (due 100 ms
// after b's end); b's is added while it lingers. "during a flush": the
// store takes 100 ms a RecordBatch, and a's outcome, with no held claim
// due within the linger, is flushed at once at 650 ms; b's is added
// during that flush, and is recorded right after it although c then
// starts within the linger. "within a store call": the store takes 200 ms
// a RecordBatch, and b, due again 650 ms after its attempt ends (past the
// linger, not past the linger and a store call), is recorded at once
// while a is held.
func TestClaimAheadLingerDueAgain(t *testing.T) {
	for _, tt := range []struct {
		name          string
		slow          time.Duration
		run, aAt, cAt time.Duration
		warm          bool // a job 3 s before b's first occurrence, so that a store call's duration is known
	}{
		{name: "lingering", run: 900 * time.Millisecond, aAt: 850 * time.Millisecond, cAt: 950 * time.Millisecond},
		{name: "during a flush", slow: 100 * time.Millisecond, run: 700 * time.Millisecond, aAt: 650 * time.Millisecond, cAt: 1200 * time.Millisecond},
		// b is due again 650 ms after its attempt ends: past the linger,
		// not past the linger and a store call.
		{name: "within a store call", slow: 200 * time.Millisecond, run: 350 * time.Millisecond, aAt: 400 * time.Millisecond, cAt: 1500 * time.Millisecond, warm: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, scheduler.Config{ClaimAhead: 500 * time.Millisecond}) // a linger of 500 ms
				e.over(&claimCounter{Store: e.store, slow: tt.slow})
				coll := &scheduler.JobCollection{Properties: scheduler.CollectionProperties{
					Quota: &scheduler.Quota{MaxRecurrence: &scheduler.MaxRecurrence{Frequency: "Second", Interval: 1}}}}
				if _, err := e.s.PutCollection(context.Background(), "c", coll, nil); err != nil {
					t.Fatal(err)
				}
				e.exec.fn = func(req *action.Request, _ int) error {
					if req.JobID() == "c/b" {
						time.Sleep(tt.run)
					}
					return nil
				}
				due := e.t0.Add(10 * time.Second).Truncate(time.Second)
				if tt.warm {
					e.put("w", oneTimeAt(due.Add(-3*time.Second)))
				}
				e.put("b", `{"action": `+hello+`}, "startTime": "`+due.UTC().Format(time.RFC3339)+`",
					"recurrence": {"frequency": "Second", "interval": 1, "count": 2}}`)
				e.put("a", oneTimeAt(due.Add(tt.aAt)))
				e.put("c", oneTimeAt(due.Add(tt.cAt)))
				e.start()
				defer e.stop()
				time.Sleep(time.Until(due.Add(3 * time.Second)))
				synctest.Wait()
				var got []time.Duration
				for _, c := range e.exec.calls {
					if c.req.JobID() == "c/b" {
						got = append(got, c.at.Sub(due))
					}
				}
				if want := []time.Duration{0, time.Second}; fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("b started at %v from its first due instant, want %v", got, want)
				}
			})
		})
	}
}

// TestClaimAheadTakesOnlyExpiredLeases: an instance that claims a second
// ahead does not take over the running attempt of an instance whose
// 1-second lease, extended every third of a second, always ends within
// that second: a claim ahead takes only leases expired at the claim.
func TestClaimAheadTakesOnlyExpiredLeases(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := memory.New()
		var mu sync.Mutex
		var calls []string
		reg := &action.Registry{}
		reg.Register(action.HTTP, action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			mu.Lock()
			calls = append(calls, req.JobID())
			mu.Unlock()
			time.Sleep(20 * time.Second)
			return nil, nil
		}))
		ctx := context.Background()
		cfg := scheduler.Config{Executors: reg, LeaseDuration: time.Second, ActionTimeout: time.Minute,
			ClaimAhead: scheduler.NoClaimAhead, Logger: slog.New(slog.DiscardHandler)}
		a := instances(t, st, cfg, "a")[0]
		cfg.LeaseDuration, cfg.ClaimAhead = 10*time.Second, time.Second
		cfg.InstanceID = "b"
		b, err := scheduler.New(st, &cfg)
		if err != nil {
			t.Fatal(err)
		}
		job, err := scheduler.ParseJob([]byte(oneTimeAt(time.Now().Add(time.Second))), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.PutJob(ctx, "c", "j", job, nil); err != nil {
			t.Fatal(err)
		}
		if err := a.Start(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if r, err := st.GetJob(ctx, "c", "j"); err != nil || r.LeaseOwner != "a" {
			t.Fatalf("the job's lease owner 2s in: %q, %v; want a, running it", r.LeaseOwner, err)
		}
		if err := b.Start(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		for _, s := range []*scheduler.Scheduler{a, b} {
			if err := s.Stop(ctx); err != nil {
				t.Fatal(err)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if len(calls) != 1 {
			t.Errorf("attempts %v, want one: b took over a's live lease", calls)
		}
	})
}

// countingRegistry runs HTTP actions by counting them in runs.
func countingRegistry(runs *atomic.Int64) *action.Registry {
	reg := &action.Registry{}
	reg.Register(action.HTTP, action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
		runs.Add(1)
		return nil, nil
	}))
	return reg
}

// putClaimed puts job c/j, due once at due, through s, and claims it in
// st for owner until until, as an instance that then dies would; it
// returns the job's definition.
func putClaimed(t *testing.T, s *scheduler.Scheduler, st scheduler.AheadClaimer, owner string, due, until time.Time) *scheduler.Job {
	t.Helper()
	job, err := scheduler.ParseJob([]byte(oneTimeAt(due)), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.PutJob(ctx, "c", "j", job, nil); err != nil {
		t.Fatal(err)
	}
	got, err := st.ClaimDueBy(ctx, scheduler.ClaimRequest{Now: time.Now(), DueBy: due, Owner: owner, LeaseUntil: until, Limit: 1})
	if err != nil || len(got) != 1 {
		t.Fatalf("ClaimDueBy(%s) = %d jobs, %v; want 1", owner, len(got), err)
	}
	return job
}

// tookOver counts the takeovers an Observer is told of.
type tookOver struct {
	traceParent
	n atomic.Int64
}

func (o *tookOver) TookOver(scheduler.Takeover)                  { o.n.Add(1) }
func (o *tookOver) TraceParent(context.Context) (string, string) { return "", "" }

// TestClaimAheadGiveBackKeepsTakeover: a claim held ahead that took over
// the expired lease of a dead instance, given back because the job was
// written, puts that lease back: the claim after it takes the lease over
// again and reports the takeover, and the job runs once.
func TestClaimAheadGiveBackKeepsTakeover(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := memory.New()
		obs := &tookOver{}
		var runs atomic.Int64
		reg := countingRegistry(&runs)
		ctx := context.Background()
		cfg := scheduler.Config{Executors: reg, LeaseDuration: 10 * time.Second, ClaimAhead: time.Second,
			Observer: obs, Logger: slog.New(slog.DiscardHandler)}
		b := instances(t, st, cfg, "b")[0]
		due := time.Now().Add(10 * time.Second)
		// Instance x claimed the job and died; its lease ended at 5s.
		job := putClaimed(t, b, st, "x", due, due.Add(time.Second))
		if err := st.ExtendLease(ctx, "c", "j", "x", time.Now().Add(5*time.Second)); err != nil {
			t.Fatal(err)
		}
		if err := b.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer b.Stop(ctx)
		time.Sleep(time.Until(due.Add(-100 * time.Millisecond)))
		synctest.Wait()
		if r, err := st.GetJob(ctx, "c", "j"); err != nil || r.LeaseOwner != "b" {
			t.Fatalf("the job's lease owner 100 ms before it is due: %q, %v; want b, holding it", r.LeaseOwner, err)
		}
		if _, err := b.PutJob(ctx, "c", "j", job, nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if n, took := runs.Load(), obs.n.Load(); n != 1 || took != 1 {
			t.Errorf("%d runs, %d takeovers reported; want 1 and 1", n, took)
		}
	})
}

// TestWritesLeaveNoMarksUnstarted: the writes of a Scheduler that is not
// started leave one mark for the loop, for every job, not one each: a
// million puts before Start would otherwise keep a million marks. Once it
// runs, the loop takes the marks of the writes.
func TestWritesLeaveNoMarksUnstarted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{ClaimAhead: scheduler.DefaultClaimAhead})
		ctx := context.Background()
		put := func(name string) {
			t.Helper()
			start := time.Now().Add(time.Hour)
			if _, err := e.s.PutJob(ctx, scheduler.DefaultCollection, name, &scheduler.Job{StartTime: &start,
				Action: action.Action{Type: action.HTTP, Request: &action.HTTPRequest{URI: "http://example.invalid/", Method: "GET"}}}, nil); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := e.s.PutCollection(ctx, scheduler.DefaultCollection, &scheduler.JobCollection{}, nil); err != nil {
			t.Fatal(err)
		}
		for i := range 10 {
			put(fmt.Sprintf("before%d", i))
		}
		if n := e.s.WriteMarks(); n != 1 {
			t.Errorf("before Start: %d write marks, want 1", n)
		}
		e.start()
		defer e.stop()
		put("running")
		synctest.Wait()
		if n := e.s.WriteMarks(); n != 0 {
			t.Errorf("the loop left %d write marks, want 0", n)
		}
	})
}

// stallGiveBack is a memory store whose first GiveBack blocks for stall,
// whatever its context, as a store that does not heed it.
type stallGiveBack struct {
	*memory.Store
	stall time.Duration
	once  sync.Once
}

func (s *stallGiveBack) GiveBack(ctx context.Context, owner string, claims []*scheduler.JobRecord) []error {
	s.once.Do(func() { time.Sleep(s.stall) })
	return s.Store.GiveBack(ctx, owner, claims)
}

// TestHeldClaimPastLeaseIsNotStarted: instance a holds claims ahead on j1
// and j2; a write to j1 makes a's loop give j1 back, and that GiveBack
// stalls for longer than the lease. j2's held lease expires meanwhile, b
// takes it over and runs j2; when a's GiveBack returns, a must not start
// its stale held claim on j2 too.
func TestHeldClaimPastLeaseIsNotStarted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := memory.New()
		var mu sync.Mutex
		calls := map[string][]string{}
		var n atomic.Int64
		mkReg := func(id string) *action.Registry {
			reg := &action.Registry{}
			reg.Register(action.HTTP, action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
				n.Add(1)
				mu.Lock()
				calls[req.JobID()] = append(calls[req.JobID()], id)
				mu.Unlock()
				return nil, nil
			}))
			return reg
		}
		ctx := context.Background()
		cfgA := scheduler.Config{InstanceID: "a", Executors: mkReg("a"), LeaseDuration: 10 * time.Second,
			Logger: slog.New(slog.DiscardHandler)} // ClaimAhead: the default
		cfgB := scheduler.Config{InstanceID: "b", Executors: mkReg("b"), LeaseDuration: 10 * time.Second,
			Logger: slog.New(slog.DiscardHandler)}
		b, err := scheduler.New(st, &cfgB)
		if err != nil {
			t.Fatal(err)
		}
		a, due := holdJobs(t, st, 15*time.Second, cfgA, "j1", "j2")
		defer a.Stop(ctx)
		// b starts now (it could have run all along: a's held leases are live).
		if err := b.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer b.Stop(ctx)
		// A write to j1 through a: a gives its held claim on j1 back.
		putOneTimeAt(t, a, "j1", due.Add(time.Hour))
		time.Sleep(time.Minute)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		t.Logf("attempts by job: %v", calls)
		for id, who := range calls {
			if len(who) > 1 {
				t.Errorf("job %s ran %d times (by %v), want once", id, len(who), who)
			}
		}
	})
}

// TestHeldClaimPastLeaseGivenBack: instance a holds claims ahead on j1
// and 30 jobs due at one instant just after it; a write to j1 makes a's
// loop give j1 back, and that GiveBack stalls for half the lease, so that
// the other held leases have too little left for their jobs to start: a
// does not start them, but gives them back, and each job runs once, as
// soon as the stall ends, not once the held leases end. The pass that
// found them says so in one warning, not one per job: how many, ten of
// their jobs, and the first one's lease and what was left of it.
func TestHeldClaimPastLeaseGivenBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := memory.New()
		var mu sync.Mutex
		starts := map[string][]time.Time{}
		reg := &action.Registry{}
		reg.Register(action.HTTP, action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			mu.Lock()
			starts[req.JobID()] = append(starts[req.JobID()], time.Now())
			mu.Unlock()
			return nil, nil
		}))
		ctx := context.Background()
		const lease = 10 * time.Second
		logs := &logRecords{}
		names := []string{"j1"}
		for i := range 30 {
			names = append(names, fmt.Sprintf("k%02d", i))
		}
		a, due := holdJobs(t, st, lease/2, scheduler.Config{InstanceID: "a", Executors: reg, LeaseDuration: lease, Logger: slog.New(logs)}, names...)
		defer a.Stop(ctx)
		r, err := st.GetJob(ctx, "c", "k00")
		if err != nil {
			t.Fatal(err)
		}
		held := r.LeaseUntil
		putOneTimeAt(t, a, "j1", due.Add(time.Hour))
		time.Sleep(time.Minute)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		for _, name := range names[1:] {
			if at := starts["c/"+name]; len(at) != 1 || !at[0].Before(held) {
				t.Errorf("%s started at %v, want once, before its held lease ended at %v", name, at, held)
			}
		}
		var late []map[string]string
		for _, w := range logs.at(slog.LevelWarn) {
			if strings.Contains(w["msg"], "too little") {
				late = append(late, w)
			}
		}
		if len(late) != 1 {
			t.Fatalf("%d warnings of claims with too little lease left, want one:\n%v", len(late), late)
		}
		w := late[0]
		left, err := time.ParseDuration(w["lease_left"])
		if w["to_give_back"] != "30" || !tenOf(w, names[1:]) || w["lease_until"] != held.String() || err != nil || left <= 0 || left >= lease*2/3 {
			t.Errorf("the warning is %v, want 30 to give back, ten of their jobs, the first one's lease until %v and less than %v of it left", w, held, lease*2/3)
		}
	})
}

// holdJobs starts an instance with cfg (ClaimAhead: the default)
// over st, whose first GiveBack stalls for stall, with jobs of names (the
// first due 10 ms before the others), and returns it 10 ms before the
// first is due, holding claims on all of them, and the first's due
// instant.
func holdJobs(t *testing.T, st *memory.Store, stall time.Duration, cfg scheduler.Config, names ...string) (*scheduler.Scheduler, time.Time) {
	t.Helper()
	ctx := context.Background()
	a, err := scheduler.New(&stallGiveBack{Store: st, stall: stall}, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.PutCollection(ctx, "c", nil, nil); err != nil {
		t.Fatal(err)
	}
	due := time.Now().Add(10 * time.Second).Truncate(time.Second)
	for i, name := range names {
		at := due
		if i > 0 {
			at = due.Add(10 * time.Millisecond)
		}
		putOneTimeAt(t, a, name, at)
	}
	if err := a.Start(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(due.Add(-10 * time.Millisecond)))
	synctest.Wait()
	for _, name := range names {
		if r, err := st.GetJob(ctx, "c", name); err != nil || r.LeaseOwner != "a" {
			a.Stop(ctx)
			t.Fatalf("%s 10 ms before due: lease owner %q, %v; want %s holding it", name, r.LeaseOwner, err, cfg.InstanceID)
		}
	}
	return a, due
}

// putOneTimeAt puts job c/name, to run once at at, through s.
func putOneTimeAt(t *testing.T, s *scheduler.Scheduler, name string, at time.Time) {
	t.Helper()
	job, err := scheduler.ParseJob([]byte(oneTimeAt(at)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutJob(context.Background(), "c", name, job, nil); err != nil {
		t.Fatal(err)
	}
}

// blockGiveBack is a memory store whose GiveBack blocks until its context
// ends, as a PostgreSQL UPDATE that waits for a row lock another
// transaction holds; it records how long it waited.
type blockGiveBack struct {
	*memory.Store
	mu     sync.Mutex
	waited []time.Duration
}

func (s *blockGiveBack) GiveBack(ctx context.Context, owner string, claims []*scheduler.JobRecord) []error {
	start := time.Now()
	<-ctx.Done()
	s.mu.Lock()
	s.waited = append(s.waited, time.Since(start))
	s.mu.Unlock()
	errs := make([]error, len(claims))
	for i := range errs {
		errs[i] = ctx.Err()
	}
	return errs
}

// TestGiveBackOfWrittenJobHasDeadline: the loop gives back a held claim on
// a job written through its Scheduler with a deadline of a tenth of
// LeaseDuration, so that a GiveBack that waits (a row lock) does not keep
// the other held claims from starting, and the claim given back is not run.
func TestGiveBackOfWrittenJobHasDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &blockGiveBack{Store: memory.New()}
		var mu sync.Mutex
		ran := map[string][]time.Time{}
		reg := &action.Registry{}
		reg.Register(action.HTTP, action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			mu.Lock()
			ran[req.JobID()] = append(ran[req.JobID()], time.Now())
			mu.Unlock()
			return nil, nil
		}))
		ctx := context.Background()
		cfg := scheduler.Config{InstanceID: "a", Executors: reg, LeaseDuration: 10 * time.Second,
			Logger: slog.New(slog.DiscardHandler)}
		s, err := scheduler.New(st, &cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutCollection(ctx, "c", nil, nil); err != nil {
			t.Fatal(err)
		}
		due := time.Now().Add(10 * time.Second).Truncate(time.Second)
		putOneTimeAt(t, s, "j1", due)
		putOneTimeAt(t, s, "j2", due)
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer s.Stop(ctx)
		time.Sleep(time.Until(due.Add(-10 * time.Millisecond)))
		synctest.Wait()
		if r, err := st.GetJob(ctx, "c", "j2"); err != nil || r.LeaseOwner != "a" {
			t.Fatalf("j2 10 ms before due: lease owner %q, %v; want a holding it", r.LeaseOwner, err)
		}
		putOneTimeAt(t, s, "j1", due.Add(time.Hour)) // a write: the claim on j1 is given back
		time.Sleep(time.Minute)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		st.mu.Lock()
		defer st.mu.Unlock()
		if len(st.waited) != 1 || st.waited[0] != cfg.LeaseDuration/10 {
			t.Errorf("GiveBack waited %v, want once, for a tenth of LeaseDuration (%v)", st.waited, cfg.LeaseDuration/10)
		}
		if got := ran["c/j1"]; len(got) != 0 {
			t.Errorf("j1, written after its claim ahead, ran at %v; want not run", got)
		}
		if got := ran["c/j2"]; len(got) != 1 || got[0].Sub(due) > cfg.LeaseDuration/10 {
			t.Errorf("j2 ran at %v, want once, within a tenth of LeaseDuration of %v", got, due)
		}
	})
}

// cutShort is a memory store whose claims and give-backs, once hang is
// set, wait for release and then do what a SQL store may do when its
// caller's context ends while a statement is under way: a claim has been
// committed, and its answer is lost (the error is the context's); a
// give-back was rolled back.
type cutShort struct {
	*memory.Store
	hang    atomic.Bool
	release chan struct{}
	fail    error // when set, what every claim and give-back fails with
}

func (c *cutShort) wait() {
	if c.hang.Load() {
		<-c.release
	}
}

func (c *cutShort) ClaimDueBy(ctx context.Context, req scheduler.ClaimRequest) ([]*scheduler.JobRecord, error) {
	c.wait()
	if c.fail != nil {
		return nil, c.fail
	}
	claims, err := c.Store.ClaimDueBy(context.WithoutCancel(ctx), req)
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	return claims, nil
}

func (c *cutShort) ClaimDue(ctx context.Context, now time.Time, owner string, leaseUntil time.Time, limit int) ([]*scheduler.JobRecord, error) {
	return c.ClaimDueBy(ctx, scheduler.ClaimRequest{Now: now, DueBy: now, Owner: owner, LeaseUntil: leaseUntil, Limit: limit})
}

func (c *cutShort) GiveBack(ctx context.Context, owner string, claims []*scheduler.JobRecord) []error {
	c.wait()
	if err := cmp.Or(c.fail, ctx.Err()); err != nil {
		errs := make([]error, len(claims))
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	return c.Store.GiveBack(ctx, owner, claims)
}

// overCutShort puts a cutShort over e's store under its Scheduler, seen
// through plainStore (not an AheadClaimer) when plain is set.
func (e *env) overCutShort(plain bool) *cutShort {
	st := &cutShort{Store: e.store, release: make(chan struct{})}
	if plain {
		e.over(plainStore{st})
	} else {
		e.over(st)
	}
	return st
}

// TestStopDuringClaim: Stop while the loop's claim, or its give-back of a
// claim held on a job written meanwhile, is under way does not cut that
// store call short, so no job stays leased to the stopped instance, to
// wait out its lease before another instance may run it: the claim's jobs,
// due already or not, are given back unrun, the written job's claim is
// given back.
func TestStopDuringClaim(t *testing.T) {
	for _, tt := range []struct {
		name  string
		ahead time.Duration
		write bool // hang on the give-back of a written job, not on the claim
		plain bool // a store that is not an AheadClaimer: the claim is of a due job
	}{
		{name: "claim ahead", ahead: scheduler.DefaultClaimAhead},
		{name: "claim at the due instant", ahead: scheduler.NoClaimAhead},
		{name: "give back a written job", ahead: scheduler.DefaultClaimAhead, write: true},
		{name: "plain store", ahead: scheduler.DefaultClaimAhead, plain: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, scheduler.Config{ClaimAhead: tt.ahead})
				st := e.overCutShort(tt.plain)
				due := e.t0.Add(10 * time.Second).Truncate(time.Second)
				e.put("j", oneTimeAt(due))
				e.start()
				if tt.write {
					time.Sleep(time.Until(due.Add(-10 * time.Millisecond)))
					synctest.Wait()
					if r := e.job("j"); r.LeaseOwner == "" {
						t.Fatalf("the job is not leased 10 ms before it is due, want its claim held")
					}
					st.hang.Store(true)
					e.put("j", oneTimeAt(due.Add(time.Hour)))
				} else {
					time.Sleep(time.Until(due.Add(-time.Second)))
					synctest.Wait() // the loop waits for the claim's time
					st.hang.Store(true)
					time.Sleep(time.Until(due))
				}
				synctest.Wait() // the loop waits in the store
				e.stopReleasing(st)
				if r := e.job("j"); r.LeaseOwner != "" {
					t.Errorf("the job is leased to %q until %v after Stop, want no lease", r.LeaseOwner, r.LeaseUntil)
				}
				if n := len(e.exec.calls); n != 0 {
					t.Errorf("%d attempts, want none", n)
				}
			})
		})
	}
}

// recreateOnClaim is a cutShort whose claim, once hang is set, has the
// claimed job deleted and created again, and the new job claimed by the
// same owner (another Scheduler of the same InstanceID), before it
// answers.
type recreateOnClaim struct {
	*cutShort
	once     sync.Once
	recreate func(owner string) error
	err      error // recreate's, set in once
}

func (c *recreateOnClaim) ClaimDue(ctx context.Context, now time.Time, owner string, leaseUntil time.Time, limit int) ([]*scheduler.JobRecord, error) {
	claims, err := c.cutShort.ClaimDue(ctx, now, owner, leaseUntil, limit)
	if err == nil && len(claims) > 0 && c.hang.Load() {
		c.once.Do(func() { c.err = c.recreate(owner) })
	}
	return claims, err
}

// TestStopLeavesLeaseOfRecreatedJob: a claim that comes back after Stop
// began, over a store that is not an AheadClaimer, has its lease released
// (see TestStopDuringClaim); when its job was deleted and created again
// meanwhile, and the new job is leased to the same owner, that lease is not
// the claim's and stays.
func TestStopLeavesLeaseOfRecreatedJob(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{InstanceID: "a", ClaimAhead: scheduler.NoClaimAhead})
		st := &recreateOnClaim{cutShort: &cutShort{Store: e.store, release: make(chan struct{})}}
		ctx := context.Background()
		var until time.Time
		st.recreate = func(owner string) error {
			old, err := e.store.GetJob(ctx, "c", "j")
			if err != nil {
				return err
			}
			if err := e.store.DeleteJob(ctx, "c", "j", ""); err != nil {
				return err
			}
			r := old.Clone()
			r.Version, r.Created, r.LeaseOwner, r.LeaseUntil = 0, time.Now(), "", time.Time{}
			if err := e.store.PutJob(ctx, r); err != nil {
				return err
			}
			until = time.Now().Add(time.Hour)
			claims, err := e.store.ClaimDue(ctx, time.Now(), owner, until, 10)
			if err == nil && len(claims) != 1 {
				err = fmt.Errorf("claimed %d jobs, want the new one", len(claims))
			}
			return err
		}
		e.over(plainStore{st})
		e.hangInClaim(st.cutShort, "j")
		e.stopReleasing(st.cutShort)
		if st.err != nil {
			t.Fatalf("delete and create the job again: %v", st.err)
		}
		if r := e.job("j"); r.LeaseOwner != "a" || !r.LeaseUntil.Equal(until) {
			t.Errorf("the new job is leased to %q until %v, want its own claim's lease (a until %v)", r.LeaseOwner, r.LeaseUntil, until)
		}
		if n := len(e.exec.calls); n != 0 {
			t.Errorf("%d attempts, want none", n)
		}
	})
}

// slowRelease is a cutShort whose Record takes a while once hang is set,
// as over a store a round trip away, unless its context ends first: it
// counts the Records under way at once, at most, and the Records of each
// job.
type slowRelease struct {
	*cutShort
	mu        sync.Mutex
	now, most int
	records   map[string]int
}

func (s *slowRelease) Record(ctx context.Context, owner string, r *scheduler.JobRecord, history []scheduler.HistoryEntry) error {
	if !s.hang.Load() {
		return s.cutShort.Record(ctx, owner, r, history)
	}
	s.mu.Lock()
	s.now++
	s.most = max(s.most, s.now)
	s.records[r.Name]++
	s.mu.Unlock()
	var err error
	select {
	case <-time.After(100 * time.Millisecond):
		err = s.cutShort.Record(ctx, owner, r, history)
	case <-ctx.Done():
		err = ctx.Err()
	}
	s.mu.Lock()
	s.now--
	s.mu.Unlock()
	return err
}

// TestStopReleasesLeasesAtOnce: the claims that come back after Stop
// began, over a store that is not an AheadClaimer, have their leases
// released side by side, each once: one at a time, a store a round trip
// away would leave those beyond the first few leased until their leases
// expire, Stop's give-backs being bounded by a tenth of LeaseDuration.
func TestStopReleasesLeasesAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{ClaimAhead: scheduler.NoClaimAhead})
		st := &slowRelease{cutShort: &cutShort{Store: e.store, release: make(chan struct{})}, records: map[string]int{}}
		e.over(plainStore{st})
		names := make([]string, 40)
		for i := range names {
			names[i] = fmt.Sprintf("j%02d", i)
		}
		e.hangInClaim(st.cutShort, names...)
		e.stopReleasing(st.cutShort)
		if st.most < 2 {
			t.Errorf("at most %d leases released at once, want several", st.most)
		}
		for _, name := range names {
			if n := st.records[name]; n != 1 {
				t.Errorf("job %s recorded %d times, want its lease released once", name, n)
			}
			if r := e.job(name); r.LeaseOwner != "" {
				t.Errorf("job %s is leased to %q until %v after Stop, want no lease", name, r.LeaseOwner, r.LeaseUntil)
			}
		}
		if n := len(e.exec.calls); n != 0 {
			t.Errorf("%d attempts, want none", n)
		}
	})
}

// giveBackErrs is an Observer that keeps the errors of the run loop's
// GiveBack calls.
type giveBackErrs struct {
	traceParent
	mu   sync.Mutex
	errs []error
}

func (o *giveBackErrs) StoreCalled(c scheduler.StoreCall) {
	if c.Op != "GiveBack" {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, err := range c.Errs {
		if err != nil {
			o.errs = append(o.errs, err)
		}
	}
}

// TestStopStoreFailuresSeen: what Stop leaves leased because the store
// failed is logged, and a failed give-back reaches the Observer (which
// package telemetry counts): a give-back of held claims that fails, and a
// claim that fails as the Scheduler stops (it may have leased jobs).
func TestStopStoreFailuresSeen(t *testing.T) {
	for _, tt := range []struct {
		name     string
		hang     bool   // fail the claim under way as Stop is called, not the give-back of held claims
		log      string // what the log must say
		observed int    // give-back errors the Observer must see
	}{
		{name: "give back", log: `msg="give back jobs claimed ahead of their due times: some stay leased to this instance, and their leases expire by themselves at their end" kept=1 claims=1 jobs=[c/j] first_err="store down"`, observed: 1},
		{name: "claim", hang: true, log: `msg="the store failed as the scheduler stopped" call="claim due jobs" err="store down"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var logs syncbuf.Buffer
				obs := &giveBackErrs{}
				e := newEnv(t, scheduler.Config{ClaimAhead: scheduler.DefaultClaimAhead, Observer: obs,
					Logger: slog.New(slog.NewTextHandler(&logs, nil))})
				st := &cutShort{Store: e.store, release: make(chan struct{})}
				e.over(st)
				due := e.t0.Add(10 * time.Second).Truncate(time.Second)
				e.put("j", oneTimeAt(due))
				e.start()
				stopped := make(chan error)
				if tt.hang {
					time.Sleep(time.Until(due.Add(-time.Second)))
					synctest.Wait()
					st.hang.Store(true)
					time.Sleep(time.Until(due))
					synctest.Wait() // the loop waits in the claim
					go func() { stopped <- e.s.Stop(context.Background()) }()
					synctest.Wait()
					st.fail = errors.New("store down")
					close(st.release)
				} else {
					time.Sleep(time.Until(due.Add(-10 * time.Millisecond)))
					synctest.Wait()
					st.fail = errors.New("store down")
					go func() { stopped <- e.s.Stop(context.Background()) }()
				}
				if err := <-stopped; err != nil {
					t.Fatalf("Stop: %v", err)
				}
				if !strings.Contains(logs.String(), tt.log) {
					t.Errorf("the log does not say %s:\n%s", tt.log, logs.String())
				}
				obs.mu.Lock()
				defer obs.mu.Unlock()
				if len(obs.errs) != tt.observed {
					t.Errorf("the Observer saw give-back errors %v, want %d", obs.errs, tt.observed)
				}
			})
		})
	}
}

// logRecords is a slog.Handler that keeps the records it handles, each
// with the context it was logged with.
type logRecords struct {
	mu      sync.Mutex
	records []logRecord
}

// logRecord is a record that logRecords kept.
type logRecord struct {
	level slog.Level
	attrs map[string]string // the attributes, and the message as "msg"
	ctx   context.Context
}

func (h *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (h *logRecords) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *logRecords) WithGroup(string) slog.Handler            { return h }

func (h *logRecords) Handle(ctx context.Context, r slog.Record) error {
	m := map[string]string{"msg": r.Message}
	r.Attrs(func(a slog.Attr) bool {
		m[a.Key] = a.Value.String()
		return true
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, logRecord{r.Level, m, ctx})
	return nil
}

// at returns the records of level and above, each as its message and
// attributes.
func (h *logRecords) at(level slog.Level) []map[string]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []map[string]string
	for _, r := range h.records {
		if r.level >= level {
			out = append(out, r.attrs)
		}
	}
	return out
}

// only returns the records of level, each as its message and attributes.
func (h *logRecords) only(level slog.Level) []map[string]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []map[string]string
	for _, r := range h.records {
		if r.level == level {
			out = append(out, r.attrs)
		}
	}
	return out
}

// with returns the first record whose attribute key is value; false when
// there is none.
func (h *logRecords) with(key, value string) (logRecord, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.records {
		if r.attrs[key] == value {
			return r, true
		}
	}
	return logRecord{}, false
}

// tenOf reports whether the jobs that the warning w names are ten jobs
// of collection c of names.
func tenOf(w map[string]string, names []string) bool {
	jobs := strings.Fields(strings.Trim(w["jobs"], "[]"))
	for _, id := range jobs {
		if !slices.Contains(names, strings.TrimPrefix(id, "c/")) {
			return false
		}
	}
	return len(jobs) == 10
}

// recordFails is a cutShort seen through plainStore (not an
// AheadClaimer) whose Record fails with fail once it is set.
type recordFails struct {
	*cutShort
	fail atomic.Pointer[error]
}

func (s *recordFails) Record(ctx context.Context, owner string, j *scheduler.JobRecord, history []scheduler.HistoryEntry) error {
	if err := s.fail.Load(); err != nil {
		return *err
	}
	return s.cutShort.Record(ctx, owner, j, history)
}

// TestStopKeptClaimsLoggedOnce: when Stop cannot give back the many jobs
// claimed ahead (the store fails), or release the leases of those of a
// claim under way over a store that is not an AheadClaimer, the log says
// so in one warning, not one per claim: how many were kept, the IDs of
// ten of their jobs, the first one's error, and that their leases expire
// by themselves.
func TestStopKeptClaimsLoggedOnce(t *testing.T) {
	for _, plain := range []bool{false, true} {
		name := "give back"
		if plain {
			name = "release"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				logs := &logRecords{}
				e := newEnv(t, scheduler.Config{ClaimAhead: scheduler.DefaultClaimAhead, Logger: slog.New(logs)})
				st := &cutShort{Store: e.store, release: make(chan struct{})}
				down := errors.New("store down")
				names := make([]string, 40)
				for i := range names {
					names[i] = fmt.Sprintf("j%02d", i)
				}
				if plain {
					rf := &recordFails{cutShort: st}
					e.over(plainStore{rf})
					e.hangInClaim(st, names...)
					rf.fail.Store(&down)
					e.stopReleasing(st)
				} else {
					e.over(st)
					due := e.t0.Add(10 * time.Second).Truncate(time.Second)
					for _, name := range names {
						e.put(name, oneTimeAt(due))
					}
					e.start()
					time.Sleep(time.Until(due.Add(-10 * time.Millisecond)))
					synctest.Wait() // every job is held
					st.fail = down
					e.stop()
				}
				warns := logs.at(slog.LevelWarn)
				if len(warns) != 1 {
					t.Fatalf("%d warnings, want one:\n%v", len(warns), warns)
				}
				w := warns[0]
				if w["kept"] != "40" || w["claims"] != "40" || w["first_err"] != "store down" || !tenOf(w, names) ||
					!strings.Contains(w["msg"], "leases expire by themselves at their end") {
					t.Errorf("the warning is %v, want 40 claims kept of 40, ten of their jobs, the first one's error, and that their leases expire", w)
				}
			})
		})
	}
}

// TestStopEndsBeforeClaim: Stop's context ends while the loop's claim is
// under way (Stop does not cut it short). Stop returns its context's
// error; the claim ends later, and none of its jobs starts or has an
// attempt recorded: over an AheadClaimer they are given back, over
// another store their leases are released (no lease left either way).
func TestStopEndsBeforeClaim(t *testing.T) {
	for _, tt := range []struct {
		name  string
		ahead time.Duration
		plain bool // a store that is not an AheadClaimer
	}{
		{name: "claim ahead", ahead: scheduler.DefaultClaimAhead},
		{name: "claim at the due instant", ahead: scheduler.NoClaimAhead},
		{name: "plain store", ahead: scheduler.DefaultClaimAhead, plain: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, scheduler.Config{ClaimAhead: tt.ahead, LeaseDuration: time.Minute})
				st := e.overCutShort(tt.plain)
				e.hangInClaim(st, "j")
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				if err := e.s.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("Stop = %v, want %v", err, context.DeadlineExceeded)
				}
				time.Sleep(3 * time.Second) // Stop has returned; the claim ends
				close(st.release)
				synctest.Wait()
				r := e.job("j")
				if r.LeaseOwner != "" {
					t.Errorf("after the claim ended: leased to %q until %v, want no lease", r.LeaseOwner, r.LeaseUntil)
				}
				if n := len(e.exec.calls); n != 0 {
					t.Errorf("%d attempts started after Stop returned, want none", n)
				}
				for _, h := range e.history("j") {
					t.Errorf("history recorded after Stop returned: %v %q", h.Status, h.Message)
				}
				if r.Status.ExecutionCount != 0 || r.Status.FailureCount != 0 {
					t.Errorf("executions %d, failures %d, want none", r.Status.ExecutionCount, r.Status.FailureCount)
				}
			})
		})
	}
}

// claimCounting is a cutShort that counts the claims begun.
type claimCounting struct {
	*cutShort
	claims atomic.Int32
}

func (c *claimCounting) ClaimDueBy(ctx context.Context, req scheduler.ClaimRequest) ([]*scheduler.JobRecord, error) {
	c.claims.Add(1)
	return c.cutShort.ClaimDueBy(ctx, req)
}

func (c *claimCounting) ClaimDue(ctx context.Context, now time.Time, owner string, leaseUntil time.Time, limit int) ([]*scheduler.JobRecord, error) {
	return c.ClaimDueBy(ctx, scheduler.ClaimRequest{Now: now, DueBy: now, Owner: owner, LeaseUntil: leaseUntil, Limit: limit})
}

// TestNoClaimAfterStop: Stop is called while the loop gives back the claim
// on a job written meanwhile (which Stop does not cut short); once that
// ends, the loop begins no claim, and the job due meanwhile does not run.
func TestNoClaimAfterStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{ClaimAhead: scheduler.DefaultClaimAhead})
		st := &claimCounting{cutShort: &cutShort{Store: e.store, release: make(chan struct{})}}
		e.over(st)
		due := e.startHolding()
		st.hang.Store(true)
		e.put("j", oneTimeAt(due.Add(time.Hour))) // the loop gives j's claim back: it hangs
		synctest.Wait()
		st.hang.Store(false)
		e.put("k", oneTimeAt(time.Now().Add(-time.Second))) // due now; the loop is in the give-back
		synctest.Wait()
		before := st.claims.Load()
		e.stopReleasing(st.cutShort)
		if n := st.claims.Load() - before; n != 0 {
			t.Errorf("%d claims begun after Stop was called, want none", n)
		}
		for _, c := range e.exec.calls {
			t.Errorf("%s started after Stop was called", c.req.JobID())
		}
	})
}

// startHolding puts job j, due 10 s after e.t0 (a whole second), starts
// e's Scheduler and waits until 10 ms before j is due, when the loop must
// hold its claim; it returns the due instant.
func (e *env) startHolding() time.Time {
	e.t.Helper()
	due := e.t0.Add(10 * time.Second).Truncate(time.Second)
	e.put("j", oneTimeAt(due))
	e.start()
	time.Sleep(time.Until(due.Add(-10 * time.Millisecond)))
	synctest.Wait()
	if r := e.job("j"); r.LeaseOwner == "" {
		e.t.Fatalf("the job is not leased 10 ms before it is due, want its claim held")
	}
	return due
}

// hangInClaim puts the jobs names, due 10 s from e.t0 (on the second),
// starts e's Scheduler over st, and returns once the loop's claim of
// them, made at their due instant, waits in st (hang set a second before).
func (e *env) hangInClaim(st *cutShort, names ...string) {
	due := e.t0.Add(10 * time.Second).Truncate(time.Second)
	for _, name := range names {
		e.put(name, oneTimeAt(due))
	}
	e.start()
	time.Sleep(time.Until(due.Add(-time.Second)))
	synctest.Wait()
	st.hang.Store(true)
	time.Sleep(time.Until(due))
	synctest.Wait() // the loop waits in the claim
}

// stopReleasing calls Stop while st hangs, and releases st once Stop has
// cancelled the loop's context.
func (e *env) stopReleasing(st *cutShort) {
	e.t.Helper()
	stopped := make(chan error)
	go func() { stopped <- e.s.Stop(context.Background()) }()
	synctest.Wait() // Stop has cancelled the loop's context
	close(st.release)
	if err := <-stopped; err != nil {
		e.t.Fatalf("Stop: %v", err)
	}
}

// workerHang is a memory store whose GetCollection, AcquirePermits or
// Record (the store calls a worker makes for a claimed job before its
// attempt starts: the run policy's read, the limits' permits, the write of
// an occurrence that runs beside others) hangs while hang is set, until
// release is closed.
type workerHang struct {
	*memory.Store
	on      string // "GetCollection", "AcquirePermits" or "Record"
	hang    atomic.Bool
	inside  atomic.Int32
	release chan struct{}
}

func (w *workerHang) wait(on string) {
	if w.on == on && w.hang.Load() {
		w.inside.Add(1)
		<-w.release
	}
}

func (w *workerHang) GetCollection(ctx context.Context, name string) (*scheduler.CollectionRecord, error) {
	w.wait("GetCollection")
	return w.Store.GetCollection(ctx, name)
}

func (w *workerHang) AcquirePermits(ctx context.Context, req scheduler.PermitRequest) (scheduler.PermitGrant, error) {
	w.wait("AcquirePermits")
	return w.Store.AcquirePermits(ctx, req)
}

func (w *workerHang) Record(ctx context.Context, owner string, r *scheduler.JobRecord, history []scheduler.HistoryEntry) error {
	w.wait("Record")
	return w.Store.Record(ctx, owner, r, history)
}

// TestStopDuringWorkerStoreCall: a claimed job reaches a worker before
// Stop; the worker waits in the store (for the run policy, read again once
// the cached one is older than 5 s, or for the permits of the collection's
// limits) when Stop's context ends. Stop returns its context's error; once
// the store answers, the job does not start, nothing is recorded for it,
// and its claim is given back.
func TestStopDuringWorkerStoreCall(t *testing.T) {
	allowAll := func(due time.Time) string {
		return allowAllJob(due, `"recurrence": {"frequency": "Hour", "count": 1}`)
	}
	for _, tt := range []struct {
		name string
		on   string // the store call that hangs
		def  func(due time.Time) string
		// run says that the occurrence's claim is written (it runs
		// beside others): it stays, for another instance to take over.
		run bool
		// plain: a store that is not an AheadClaimer; the claim's lease
		// is released, the job otherwise as it was.
		plain bool
	}{
		{name: "run policy", on: "GetCollection", def: oneTimeAt},
		{name: "run policy, AllowAll", on: "GetCollection", def: allowAll},
		{name: "permits", on: "AcquirePermits", def: oneTimeAt},
		{name: "write of a run, AllowAll", on: "Record", def: allowAll, run: true},
		{name: "run policy, plain store", on: "GetCollection", def: oneTimeAt, plain: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, scheduler.Config{LeaseDuration: time.Minute})
				st := &workerHang{Store: e.store, on: tt.on, release: make(chan struct{})}
				if tt.plain {
					e.over(plainStore{st})
				} else {
					e.over(st)
				}
				if tt.on == "AcquirePermits" {
					putLimits(t, e.s, scheduler.Limit{Key: scheduler.LimitCollection, MaxConcurrent: 5})
				}
				due := e.t0.Add(time.Hour).Truncate(time.Second)
				e.put("j", tt.def(due))
				e.start()
				time.Sleep(time.Until(due.Add(-time.Second)))
				synctest.Wait()
				before := e.job("j")
				st.hang.Store(true)
				time.Sleep(time.Until(due.Add(100 * time.Millisecond)))
				synctest.Wait()
				if n := st.inside.Load(); n != 1 {
					t.Fatalf("%d workers wait in the store at the due instant, want 1", n)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				if err := e.s.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("Stop = %v, want %v", err, context.DeadlineExceeded)
				}
				time.Sleep(3 * time.Second) // Stop has returned
				close(st.release)
				time.Sleep(time.Second)
				synctest.Wait()
				if n := len(e.exec.calls); n != 0 {
					t.Errorf("%d attempts started after Stop returned, want none", n)
				}
				for _, h := range e.history("j") {
					t.Errorf("history recorded after Stop returned: %v %q", h.Status, h.Message)
				}
				r := e.job("j")
				if r.Status.ExecutionCount != 0 || r.Status.FailureCount != 0 {
					t.Errorf("executions %d, failures %d, want none", r.Status.ExecutionCount, r.Status.FailureCount)
				}
				if r.LeaseOwner != "" {
					t.Errorf("leased to %q until %v, want the claim given back", r.LeaseOwner, r.LeaseUntil)
				}
				var runs []scheduler.Run
				if p := r.Schedule.Policy; p != nil {
					runs = p.Running
				}
				if tt.run {
					if len(runs) != 1 || runs[0].Owner == "" {
						t.Errorf("runs %+v, want one, claimed by this instance", runs)
					}
				} else if len(runs) > 0 {
					t.Errorf("runs %+v, want none", runs)
				}
				if !tt.run {
					// Only the Version may change (a plain store's
					// Record of the job as it was releases the lease).
					if diff := gocmp.Diff(before, r, cmpopts.IgnoreFields(scheduler.JobRecord{}, "Version")); diff != "" {
						t.Errorf("the job after Stop differs from the job before the claim (-before +after):\n%s", diff)
					}
				}
			})
		})
	}
}

// TestTakeoverReportedWhenAttemptStarts: b claims a job whose lease x let
// expire, and its worker waits in the store (the run policy's read) until
// after Stop returned: the attempt does not start, the claim is given
// back, and no takeover is reported. c then claims the job, takes the
// lease over again and runs it: the takeover is reported once, by c.
func TestTakeoverReportedWhenAttemptStarts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &workerHang{Store: memory.New(), on: "GetCollection", release: make(chan struct{})}
		obs := &tookOver{}
		var runs atomic.Int64
		reg := countingRegistry(&runs)
		ctx := context.Background()
		cfg := scheduler.Config{Executors: reg, LeaseDuration: time.Minute, Observer: obs, Logger: slog.New(slog.DiscardHandler)}
		ss := instances(t, st, cfg, "b", "c")
		b, c := ss[0], ss[1]
		due := time.Now().Add(time.Hour).Truncate(time.Second)
		// Instance x claimed the job and died; its lease ends a second
		// after the due instant.
		putClaimed(t, b, st, "x", due, due.Add(time.Second))
		if err := b.Start(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Until(due.Add(-time.Second)))
		synctest.Wait()
		st.hang.Store(true)
		time.Sleep(time.Until(due.Add(2 * time.Second)))
		synctest.Wait()
		if n := st.inside.Load(); n != 1 {
			t.Fatalf("%d workers wait in the store after x's lease ended, want 1 (b's)", n)
		}
		stopCtx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		if err := b.Stop(stopCtx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("b.Stop = %v, want %v", err, context.DeadlineExceeded)
		}
		st.hang.Store(false)
		close(st.release)
		synctest.Wait()
		if n, took := runs.Load(), obs.n.Load(); n != 0 || took != 0 {
			t.Errorf("after b stopped: %d runs, %d takeovers reported; want 0 and 0", n, took)
		}
		if err := c.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer c.Stop(ctx)
		time.Sleep(time.Second)
		synctest.Wait()
		if n, took := runs.Load(), obs.n.Load(); n != 1 || took != 1 {
			t.Errorf("after c ran the job: %d runs, %d takeovers reported; want 1 and 1", n, took)
		}
	})
}

// lateClaim is a store whose first claim that takes a job is answered
// stall after the store took it: the claim committed, its answer slow (a
// network stall, a store under load).
type lateClaim struct {
	*memory.Store
	stall time.Duration
	once  sync.Once
}

func (s *lateClaim) ClaimDueBy(ctx context.Context, c scheduler.ClaimRequest) ([]*scheduler.JobRecord, error) {
	return s.late(s.Store.ClaimDueBy(ctx, c))
}

func (s *lateClaim) ClaimDue(ctx context.Context, now time.Time, owner string, leaseUntil time.Time, limit int) ([]*scheduler.JobRecord, error) {
	return s.late(s.Store.ClaimDue(ctx, now, owner, leaseUntil, limit))
}

func (s *lateClaim) late(recs []*scheduler.JobRecord, err error) ([]*scheduler.JobRecord, error) {
	if len(recs) > 0 {
		s.once.Do(func() { time.Sleep(s.stall) })
	}
	return recs, err
}

// TestClaimAnsweredLateIsGivenBack: instance a's claim of a job due now
// is answered after eight tenths of the lease. Started then, the job would
// run with a fifth of its lease left, which ends before the lease keeper
// first extends it, and b would take it over and run it too: a gives the
// claim back instead, and the job runs once, with the lease it needs.
// Over a store that is not an AheadClaimer too.
func TestClaimAnsweredLateIsGivenBack(t *testing.T) {
	for _, tt := range []struct {
		name  string
		plain bool // a store that is not an AheadClaimer
	}{
		{name: "AheadClaimer"},
		{name: "plain store", plain: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const lease = 10 * time.Second
				st := memory.New()
				var mu sync.Mutex
				var starts []string
				var left []time.Duration
				mkReg := func(id string) *action.Registry {
					reg := &action.Registry{}
					reg.Register(action.HTTP, action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
						r, err := st.GetJob(context.Background(), "c", "j")
						mu.Lock()
						starts = append(starts, id)
						if err == nil {
							left = append(left, time.Until(r.LeaseUntil))
						}
						mu.Unlock()
						select { // an attempt that outlasts the lease
						case <-ctx.Done():
						case <-time.After(3 * lease):
						}
						return nil, nil
					}))
					return reg
				}
				var sa, sb scheduler.Store = &lateClaim{Store: st, stall: lease * 8 / 10}, st
				if tt.plain {
					sa, sb = plainStore{sa}, plainStore{sb}
				}
				ctx := context.Background()
				a, err := scheduler.New(sa, &scheduler.Config{InstanceID: "a", Executors: mkReg("a"), LeaseDuration: lease, Logger: slog.New(slog.DiscardHandler)})
				if err != nil {
					t.Fatal(err)
				}
				b, err := scheduler.New(sb, &scheduler.Config{InstanceID: "b", Executors: mkReg("b"), LeaseDuration: lease, Logger: slog.New(slog.DiscardHandler)})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := a.PutCollection(ctx, "c", nil, nil); err != nil {
					t.Fatal(err)
				}
				putOneTimeAt(t, a, "j", time.Now())
				if err := a.Start(ctx); err != nil {
					t.Fatal(err)
				}
				defer a.Stop(ctx)
				time.Sleep(100 * time.Millisecond) // a's claim is under way
				if err := b.Start(ctx); err != nil {
					t.Fatal(err)
				}
				defer b.Stop(ctx)
				time.Sleep(time.Minute)
				synctest.Wait()
				mu.Lock()
				defer mu.Unlock()
				if len(starts) != 1 {
					t.Errorf("the job started %d times (by %v), want once", len(starts), starts)
				}
				for i, l := range left {
					if l < lease*2/3 {
						t.Errorf("attempt %d (by %s) started with %v of its lease left, want at least two thirds of %v", i+1, starts[i], l, lease)
					}
				}
			})
		})
	}
}

// TestTakeoverReportedWhenItWaitsForALimit: b claims a job whose lease x
// let expire, and its step cannot read the collection's limits, so the
// occurrence waits for them: the step records the job, which releases
// the lease, and the claim that later runs the occurrence has no lease to
// take over. The takeover is reported once, when the record is written.
func TestTakeoverReportedWhenItWaitsForALimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		mem := memory.New()
		st := &collectionsDown{Store: mem}
		obs := &tookOver{}
		var runs atomic.Int64
		cfg := scheduler.Config{Executors: countingRegistry(&runs), LeaseDuration: time.Minute, Logger: slog.New(slog.DiscardHandler)}
		admin := instances(t, mem, cfg, "admin")[0]
		putLimits(t, admin, scheduler.Limit{Key: scheduler.LimitCollection, MaxConcurrent: 1})
		due := time.Now().Add(time.Hour).Truncate(time.Second)
		// Instance x claimed the job and died; its lease ends a second
		// after the due instant.
		putClaimed(t, admin, mem, "x", due, due.Add(time.Second))
		cfg.InstanceID, cfg.Observer = "b", obs
		b, err := scheduler.New(st, &cfg)
		if err != nil {
			t.Fatal(err)
		}
		st.down.Store(true)
		if err := b.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer b.Stop(ctx)
		time.Sleep(time.Until(due.Add(5 * time.Second)))
		synctest.Wait()
		if n, took := runs.Load(), obs.n.Load(); n != 0 || took != 1 {
			t.Errorf("after b took the job over and it waits for its limits: %d runs, %d takeovers reported; want 0 and 1", n, took)
		}
		st.down.Store(false)
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		if n, took := runs.Load(), obs.n.Load(); n != 1 || took != 1 {
			t.Errorf("after b ran the job: %d runs, %d takeovers reported; want 1 and 1", n, took)
		}
	})
}
