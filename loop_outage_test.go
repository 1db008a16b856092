package scheduler_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/internal/syncbuf"
	"github.com/jobclock/scheduler/store/memory"
)

// cutStore is one instance's connection to a store shared by several:
// the calls that the engine makes fail with errUnreachable while cut
// reports true. It is no AheadClaimer; cutAheadStore is one.
type cutStore struct {
	scheduler.Store
	cut func() bool
}

func (s *cutStore) ClaimDue(ctx context.Context, now time.Time, owner string, until time.Time, limit int) ([]*scheduler.JobRecord, error) {
	if s.cut() {
		return nil, errUnreachable
	}
	return s.Store.ClaimDue(ctx, now, owner, until, limit)
}

func (s *cutStore) NextDue(ctx context.Context) (time.Time, error) {
	if s.cut() {
		return time.Time{}, errUnreachable
	}
	return s.Store.NextDue(ctx)
}

func (s *cutStore) ExtendLease(ctx context.Context, collection, name, owner string, until time.Time) error {
	if s.cut() {
		return errUnreachable
	}
	return s.Store.ExtendLease(ctx, collection, name, owner, until)
}

func (s *cutStore) Record(ctx context.Context, owner string, j *scheduler.JobRecord, history []scheduler.HistoryEntry) error {
	if s.cut() {
		return errUnreachable
	}
	return s.Store.Record(ctx, owner, j, history)
}

func (s *cutStore) GetJob(ctx context.Context, collection, name string) (*scheduler.JobRecord, error) {
	if s.cut() {
		return nil, errUnreachable
	}
	return s.Store.GetJob(ctx, collection, name)
}

func (s *cutStore) Prune(ctx context.Context, req scheduler.PruneRequest) (int, error) {
	if s.cut() {
		return 0, errUnreachable
	}
	return s.Store.Prune(ctx, req)
}

// cutAheadStore is a cutStore that is an AheadClaimer.
type cutAheadStore struct {
	*cutStore
	mem *memory.Store
}

func (s cutAheadStore) ClaimDueBy(ctx context.Context, c scheduler.ClaimRequest) ([]*scheduler.JobRecord, error) {
	if s.cut() {
		return nil, errUnreachable
	}
	return s.mem.ClaimDueBy(ctx, c)
}

func (s cutAheadStore) GiveBack(ctx context.Context, owner string, claims []*scheduler.JobRecord) []error {
	errs := make([]error, len(claims))
	for i := range errs {
		if s.cut() {
			errs[i] = errUnreachable
		}
	}
	if s.cut() {
		return errs
	}
	return s.mem.GiveBack(ctx, owner, claims)
}

// TestOutageLongerThanLeaseRunsOnce: three instances share a store that
// goes away for longer than LeaseDuration while an attempt runs on
// instance "b"; the attempt ends meanwhile. Instance "a" finds the store
// back before "b" does. The occurrence runs once, and "b" records its
// outcome: "a" does not take over the lease that expired during the
// outage before "b" could record.
func TestOutageLongerThanLeaseRunsOnce(t *testing.T) {
	for _, ahead := range []bool{false, true} {
		name := "ClaimDue"
		if ahead {
			name = "ClaimDueBy"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { testOutageTakeover(t, ahead, false, false) })
		})
	}
}

// TestOutageAllowAllRunsOnce: as TestOutageLongerThanLeaseRunsOnce, under
// runPolicy.overlap AllowAll, where "b" holds a claim on the occurrence's
// run (not a lease of the job), which expires during the outage: "a"
// does not take the run over before "b" could record its outcome.
func TestOutageAllowAllRunsOnce(t *testing.T) {
	for _, ahead := range []bool{false, true} {
		name := "ClaimDue"
		if ahead {
			name = "ClaimDueBy"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { testOutageTakeover(t, ahead, false, true) })
		})
	}
}

// TestOutageAllowAllCrashedOwnerTakenOver: as
// TestOutageCrashedOwnerTakenOver, under runPolicy.overlap AllowAll: the
// run whose claim expired during the outage is taken over a grace after
// "a" or "c" found the store back.
func TestOutageAllowAllCrashedOwnerTakenOver(t *testing.T) {
	for _, ahead := range []bool{false, true} {
		name := "ClaimDue"
		if ahead {
			name = "ClaimDueBy"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { testOutageTakeover(t, ahead, true, true) })
		})
	}
}

// TestOutageCrashedOwnerTakenOver: as TestOutageLongerThanLeaseRunsOnce,
// but "b" never gets the store back (it is as good as dead): "a" takes
// its job over within the grace after it found the store back, and the
// occurrence runs again with the same execution tag.
func TestOutageCrashedOwnerTakenOver(t *testing.T) {
	for _, ahead := range []bool{false, true} {
		name := "ClaimDue"
		if ahead {
			name = "ClaimDueBy"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { testOutageTakeover(t, ahead, true, false) })
		})
	}
}

// testOutageTakeover runs the test of an outage; allowAll puts the job
// under runPolicy.overlap AllowAll, with an ActionTimeout of 10s: the
// claim on its run lasts 20s from its start, and expires in the outage.
func testOutageTakeover(t *testing.T, ahead, ownerDead, allowAll bool) {
	const (
		outage = 26 * time.Second // longer than DefaultLeaseDuration
		later  = 700 * time.Millisecond
		// The grace with the default LeaseDuration (see doc.go).
		grace = scheduler.DefaultLeaseDuration / 2
	)
	ctx := context.Background()
	mem := memory.New()
	var down atomic.Bool
	var backAt atomic.Int64 // when the store came back, in UnixNano; 0: not yet
	cuts := map[string]func() bool{
		"a": down.Load,
		"b": func() bool {
			if ownerDead && backAt.Load() != 0 {
				return true
			}
			// b finds the store back later than a.
			return down.Load() || time.Now().UnixNano() < backAt.Load()+int64(later)
		},
		"c": down.Load,
	}
	var mu sync.Mutex
	var starts []time.Time
	runs := make(map[string]map[string]int) // by execution tag, by instance
	var first sync.Once
	work := func(id string) action.Executor {
		return action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			first.Do(func() {
				// The store goes away while the first attempt runs, and
				// comes back after outage.
				time.AfterFunc(time.Second, func() {
					down.Store(true)
					time.AfterFunc(outage, func() {
						backAt.Store(time.Now().UnixNano())
						down.Store(false)
					})
				})
			})
			mu.Lock()
			if runs[req.ExecutionTag()] == nil {
				runs[req.ExecutionTag()] = make(map[string]int)
			}
			runs[req.ExecutionTag()][id]++
			starts = append(starts, time.Now())
			mu.Unlock()
			time.Sleep(5 * time.Second) // ends during the outage
			return &action.Result{Message: "done"}, nil
		})
	}
	logs := make(map[string]*syncbuf.Buffer)
	ss := make(map[string]*scheduler.Scheduler)
	for _, id := range []string{"a", "b", "c"} {
		var st scheduler.Store = &cutStore{Store: mem, cut: cuts[id]}
		if ahead {
			st = cutAheadStore{st.(*cutStore), mem}
		}
		logs[id] = new(syncbuf.Buffer)
		reg := &action.Registry{}
		reg.Register("Work", work(id))
		cfg := &scheduler.Config{Executors: reg, InstanceID: id, Logger: slog.New(slog.NewTextHandler(logs[id], nil))}
		if allowAll {
			cfg.ActionTimeout = 10 * time.Second
		}
		s, err := scheduler.New(st, cfg)
		if err != nil {
			t.Fatal(err)
		}
		ss[id] = s
	}
	if _, err := ss["a"].PutCollection(ctx, "c", nil, nil); err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(time.Second)
	job := &scheduler.Job{StartTime: &start, Action: action.Action{Type: "Work"}}
	if allowAll {
		job.RunPolicy = &scheduler.RunPolicy{Overlap: scheduler.OverlapAllowAll}
	}
	if _, err := ss["a"].PutJob(ctx, "c", "once", job, nil); err != nil {
		t.Fatal(err)
	}
	// b alone claims the job; a and c start while its attempt runs and
	// the store still answers.
	if err := ss["b"].Start(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	for _, id := range []string{"a", "c"} {
		if err := ss[id].Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(outage + 2*time.Minute)
	for _, id := range []string{"a", "b", "c"} {
		stopCtx, cancel := context.WithTimeout(ctx, time.Minute)
		err := ss[id].Stop(stopCtx)
		cancel()
		if err != nil && !(ownerDead && id == "b") {
			t.Errorf("Stop of %s: %v", id, err)
		}
	}
	hist, err := mem.ListHistory(ctx, "c", "once", scheduler.HistoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(runs) != 1 {
		t.Fatalf("runs by tag %v, want one occurrence", runs)
	}
	var byInstance map[string]int
	for _, m := range runs {
		byInstance = m
	}
	back := time.Unix(0, backAt.Load())
	if !ownerDead {
		if len(byInstance) != 1 || byInstance["b"] != 1 || len(hist) != 1 || hist[0].Status != scheduler.StatusCompleted {
			t.Errorf("runs by instance %v, history %+v; want one run on b, recorded once as Completed", byInstance, hist)
		}
		if text := logs["b"].String(); !strings.Contains(text, "recorded job outcome after the store failed") {
			t.Errorf("b's log does not say that it recorded the outcome:\n%s", text)
		}
	} else {
		// b's run is lost with it; a or c runs the occurrence again, a
		// grace after it found the store back (within a second of its
		// return: the loop asks again every second during an outage), at
		// the next claim (within a second).
		if len(starts) != 2 || byInstance["b"] != 1 || byInstance["a"]+byInstance["c"] != 1 {
			t.Fatalf("runs by instance %v, want one on b and one taken over by a or c", byInstance)
		}
		if took := starts[1].Sub(back); took < grace || took > grace+2*time.Second {
			t.Errorf("taken over %v after the store came back, want from %v to %v", took, grace, grace+2*time.Second)
		}
		if len(hist) != 1 || hist[0].Status != scheduler.StatusCompleted {
			t.Errorf("history %+v, want the run taken over, recorded as Completed", hist)
		}
	}
	if t.Failed() {
		for id, l := range logs {
			t.Logf("%s's log:\n%s", id, l.String())
		}
	}
}
