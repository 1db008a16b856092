package scheduler_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/internal/syncbuf"
	"github.com/jobclock/scheduler/store/memory"
	"github.com/jobclock/scheduler/store/sqlite"
)

// recreateStore is what the recreate tests need of a store: what their
// wrappers pass on.
type recreateStore interface {
	scheduler.Store
	scheduler.BatchRecorder
	scheduler.AheadClaimer
}

// recreateStores runs test in a testing/synctest bubble over the memory
// store and over SQLite, each made in the bubble.
func recreateStores(t *testing.T, test func(t *testing.T, st recreateStore)) {
	t.Run("memory", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) { test(t, memory.New()) })
	})
	t.Run("sqlite", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "jobs.db"), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			test(t, st)
		})
	})
}

// recreated is a Scheduler whose job c/j, a one-off of action type Wait,
// is deleted while its attempt runs and created again under the same name:
// the attempts of the "first" and "second" jobs report that they started
// and wait to be released.
type recreated struct {
	s       *scheduler.Scheduler
	started chan string
	release map[string]chan struct{}
	log     syncbuf.Buffer // the Scheduler's log, Debug and up
}

func newRecreated(t *testing.T, st scheduler.Store) *recreated {
	t.Helper()
	x := &recreated{started: make(chan string, 2), release: map[string]chan struct{}{"first": make(chan struct{}), "second": make(chan struct{})}}
	reg := &action.Registry{}
	reg.Register("Wait", action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
		var c struct{ Job string }
		if err := json.Unmarshal(req.Action.Custom, &c); err != nil {
			return nil, err
		}
		x.started <- c.Job
		<-x.release[c.Job]
		return &action.Result{Message: "the " + c.Job + " job ran"}, nil
	}))
	s, err := scheduler.New(st, &scheduler.Config{Executors: reg, InstanceID: "a",
		Logger: slog.New(slog.NewTextHandler(&x.log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	x.s = s
	if _, err := s.PutCollection(context.Background(), "c", nil, nil); err != nil {
		t.Fatal(err)
	}
	return x
}

// put creates job c/j, the "first" or the "second".
func (x *recreated) put(t *testing.T, which string) {
	t.Helper()
	if err := x.putJob(which, ""); err != nil {
		t.Fatal(err)
	}
}

// putJob creates job c/j, the "first" or the "second", with more of its
// definition's properties in more (empty, or starting with a comma).
func (x *recreated) putJob(which, more string) error {
	def, err := scheduler.ParseJob([]byte(`{"action": {"type": "Wait", "custom": {"job": "`+which+`"}}`+more+`}`),
		&scheduler.ParseOptions{ActionTypes: []action.Type{"Wait"}})
	if err != nil {
		return err
	}
	if _, err := x.s.PutJob(context.Background(), "c", "j", def, nil); err != nil {
		return fmt.Errorf("PutJob(%s): %w", which, err)
	}
	return nil
}

// wantStarted waits for the attempt of the job which to start.
func (x *recreated) wantStarted(t *testing.T, which string) {
	t.Helper()
	if err := x.waitStarted(which); err != nil {
		t.Fatal(err)
	}
}

// waitStarted waits for the attempt of the job which to start.
func (x *recreated) waitStarted(which string) error {
	if got := <-x.started; got != which {
		return fmt.Errorf("the %s job started, want the %s", got, which)
	}
	return nil
}

// recreate deletes job c/j and creates the second one at once, then
// waits for its attempt to start. In the bubble, whose clock has not
// moved, the second job is created at the instant the first was (the same
// Created): only the Incarnation its store drew tells the two apart.
func (x *recreated) recreate(t *testing.T) {
	t.Helper()
	if err := x.recreateJob(); err != nil {
		t.Fatal(err)
	}
}

// recreateJob is recreate for a goroutine other than the test's.
func (x *recreated) recreateJob() error {
	if err := x.s.DeleteJob(context.Background(), "c", "j", nil); err != nil {
		return err
	}
	if err := x.putJob("second", ""); err != nil {
		return err
	}
	return x.waitStarted("second")
}

// check releases the attempt of the job which and checks that the second
// job then shows the outcomes of its own attempts only: ran, whether the
// second job's attempt ended.
func (x *recreated) check(t *testing.T, which string, ran bool) {
	t.Helper()
	close(x.release[which])
	time.Sleep(time.Second)
	synctest.Wait()
	ctx := context.Background()
	r, err := x.s.GetJob(ctx, "c", "j")
	if err != nil {
		t.Fatal(err)
	}
	hist, err := x.s.ListHistory(ctx, "c", "j", nil)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, h := range hist {
		msgs = append(msgs, h.Message)
	}
	got := fmt.Sprintf("executionCount %d, state %s, history %q", r.Status.ExecutionCount, r.State, msgs)
	want := `executionCount 0, state Enabled, history []`
	if ran {
		want = `executionCount 1, state Completed, history ["the second job ran"]`
	}
	if got != want {
		t.Errorf("the second job once the %s job's attempt ended: %s; want %s", which, got, want)
	}
}

// TestOutcomeOfDeletedJobLeavesItsSuccessor deletes a job while its attempt
// runs and creates it again under the same name; the new job is claimed,
// by the same instance, at the version the first one was claimed at. The
// first attempt's outcome then belongs to no job: it must not be recorded
// on the new one (its counters, state, history and lease).
func TestOutcomeOfDeletedJobLeavesItsSuccessor(t *testing.T) {
	recreateStores(t, func(t *testing.T, st recreateStore) {
		x := newRecreated(t, st)
		x.put(t, "first")
		if err := x.s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		defer x.s.Stop(context.Background())
		x.wantStarted(t, "first")
		x.recreate(t)
		x.check(t, "first", false)
		x.check(t, "second", true)
		if n := strings.Count(x.log.String(), `msg="drop the outcome of a deleted job" job=j collection=c`); n != 1 {
			t.Errorf("the log notes %d dropped outcomes, want 1:\n%s", n, x.log.String())
		}
	})
}

// conflictAfterRecreate is a memory store whose first RecordBatch of the
// first job's outcome finds that job changed (ErrConflict), and meanwhile
// has it deleted and created again (recreate), whose attempt starts: the
// fresh read that follows a conflict finds the second job.
type conflictAfterRecreate struct {
	recreateStore
	once     sync.Once
	recreate func() error
	err      error // recreate's, set in once
}

func (s *conflictAfterRecreate) RecordBatch(ctx context.Context, owner string, batch []scheduler.RecordRequest) []error {
	errs := make([]error, len(batch))
	var rest []scheduler.RecordRequest
	var at []int
	for i, b := range batch {
		first := false
		for _, h := range b.History {
			first = first || h.Message == "the first job ran"
		}
		conflict := false
		if first {
			s.once.Do(func() {
				s.err = s.recreate()
				conflict = true
			})
		}
		if conflict {
			errs[i] = fmt.Errorf("test: record job %q: %w", b.Job.ID(), scheduler.ErrConflict)
			continue
		}
		rest, at = append(rest, b), append(at, i)
	}
	for k, err := range s.recreateStore.RecordBatch(ctx, owner, rest) {
		errs[at[k]] = err
	}
	return errs
}

// TestConflictedOutcomeOfDeletedJobLeavesItsSuccessor is
// TestOutcomeOfDeletedJobLeavesItsSuccessor with the job deleted and
// created again between the first job's outcome meeting a conflicting
// write and the fresh read that follows it.
func TestConflictedOutcomeOfDeletedJobLeavesItsSuccessor(t *testing.T) {
	recreateStores(t, func(t *testing.T, inner recreateStore) {
		st := &conflictAfterRecreate{recreateStore: inner}
		x := newRecreated(t, st)
		st.recreate = x.recreateJob
		x.put(t, "first")
		if err := x.s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		defer x.s.Stop(context.Background())
		x.wantStarted(t, "first")
		x.check(t, "first", false)
		st.once.Do(func() {}) // the first job's outcome has been recorded: st.err is set
		if st.err != nil {
			t.Fatal(st.err)
		}
		x.check(t, "second", true)
	})
}

// recordRecreates is a memory store whose first Record of the first job
// (a bookkeeping write before its attempt starts) has the job deleted and
// created again (recreate), whose attempt starts, and then finds it
// changed (ErrConflict): the fresh read that follows the conflict finds
// the second job, leased by the claim its attempt runs on.
type recordRecreates struct {
	recreateStore
	once     sync.Once
	recreate func() error
	err      error // recreate's, set in once
}

func (s *recordRecreates) Record(ctx context.Context, owner string, r *scheduler.JobRecord, history []scheduler.HistoryEntry) error {
	conflict := false
	if string(r.Job.Action.Custom) == `{"job":"first"}` {
		s.once.Do(func() {
			s.err = s.recreate()
			conflict = true
		})
	}
	if conflict {
		return fmt.Errorf("test: record job %q: %w", r.ID(), scheduler.ErrConflict)
	}
	return s.recreateStore.Record(ctx, owner, r, history)
}

// TestStepOfDeletedJobLeavesItsSuccessor has a job's bookkeeping write
// before its attempt starts meet a conflicting write, having had the job
// deleted and created again: the step must not go on with the new job,
// whose attempt runs on a claim of its own, and must not release that
// claim's lease, which keeps other claims from starting the attempt again.
func TestStepOfDeletedJobLeavesItsSuccessor(t *testing.T) {
	recreateStores(t, func(t *testing.T, inner recreateStore) {
		st := &recordRecreates{recreateStore: inner}
		x := newRecreated(t, st)
		st.recreate = x.recreateJob
		// Beside others, an attempt starts once its job is written.
		if err := x.putJob("first", `, "runPolicy": {"overlap": "AllowAll"}`); err != nil {
			t.Fatal(err)
		}
		if err := x.s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		defer x.s.Stop(context.Background())
		time.Sleep(2 * time.Second)
		synctest.Wait()
		st.once.Do(func() {}) // the first job's write has been tried: st.err is set
		if st.err != nil {
			t.Fatal(st.err)
		}
		r, err := x.s.GetJob(context.Background(), "c", "j")
		if err != nil {
			t.Fatal(err)
		}
		if r.LeaseOwner != "a" {
			t.Errorf("while the second job's attempt runs, its lease owner is %q, want %q", r.LeaseOwner, "a")
		}
		x.check(t, "second", true)
		time.Sleep(time.Minute) // past the lease of any claim
		synctest.Wait()
		if len(x.started) != 0 {
			t.Errorf("the %s job's attempt started again", <-x.started)
		}
	})
}

// TestRunBesideOthersOfDeletedJobLeavesItsSuccessor is
// TestOutcomeOfDeletedJobLeavesItsSuccessor with both jobs running their
// occurrences beside others (OverlapAllowAll): the first attempt's
// outcome is written to the job without its lease, to the run of its
// owner and execution tag, which the second job's first occurrence must
// not share.
func TestRunBesideOthersOfDeletedJobLeavesItsSuccessor(t *testing.T) {
	recreateStores(t, func(t *testing.T, st recreateStore) {
		x := newRecreated(t, st)
		const allowAll = `, "runPolicy": {"overlap": "AllowAll"}`
		if err := x.putJob("first", allowAll); err != nil {
			t.Fatal(err)
		}
		if err := x.s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		defer x.s.Stop(context.Background())
		x.wantStarted(t, "first")
		if err := x.s.DeleteJob(context.Background(), "c", "j", nil); err != nil {
			t.Fatal(err)
		}
		if err := x.putJob("second", allowAll); err != nil {
			t.Fatal(err)
		}
		x.wantStarted(t, "second")
		x.check(t, "first", false)
		x.check(t, "second", true)
	})
}
