package scheduler_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
)

// slowJobs is a Scheduler over a store whose action type Slow takes its
// definition's seconds, noting each attempt's expected time and
// execution tag. It logs to log (nil: nowhere).
type slowJobs struct {
	s     *scheduler.Scheduler
	mu    sync.Mutex
	calls []slowCall
}

// slowCall is one attempt of a Slow action.
type slowCall struct {
	Expected time.Time
	Tag      string
	Start    time.Time
}

func newSlowJobs(t *testing.T, st scheduler.Store, log *slog.Logger) *slowJobs {
	t.Helper()
	x := &slowJobs{}
	reg := &action.Registry{}
	reg.Register("Slow", action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
		var c struct{ Seconds int }
		if err := json.Unmarshal(req.Action.Custom, &c); err != nil {
			return nil, err
		}
		x.mu.Lock()
		x.calls = append(x.calls, slowCall{req.ExpectedTime, req.IDs.ExecutionTag(), time.Now()})
		x.mu.Unlock()
		time.Sleep(time.Duration(c.Seconds) * time.Second)
		return &action.Result{Message: "done"}, nil
	}))
	if log == nil {
		log = discard
	}
	s, err := scheduler.New(st, &scheduler.Config{Executors: reg, InstanceID: "a", Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	x.s = s
	if _, err := s.PutCollection(context.Background(), "c", nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return x
}

// put creates job c/name, whose action takes secs seconds, with more of
// its definition's properties in more (empty, or starting with a comma).
func (x *slowJobs) put(t *testing.T, name string, secs int, more string) {
	t.Helper()
	def, err := scheduler.ParseJob([]byte(fmt.Sprintf(`{"action": {"type": "Slow", "custom": {"seconds": %d}}%s}`, secs, more)),
		&scheduler.ParseOptions{ActionTypes: []action.Type{"Slow"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.s.PutJob(context.Background(), "c", name, def, nil); err != nil {
		t.Fatal(err)
	}
}

// attempts returns the attempts so far.
func (x *slowJobs) attempts() []slowCall {
	x.mu.Lock()
	defer x.mu.Unlock()
	return append([]slowCall(nil), x.calls...)
}

// TestBackfillTwice: a second backfill of a range whose occurrences wait to
// be backfilled, or run, does not run them again, whether it asks for the
// missing ones or for all; nor does one asked for once they ran, unless it
// asks for all.
func TestBackfillTwice(t *testing.T) {
	for _, only := range []scheduler.BackfillOnly{scheduler.BackfillMissing, scheduler.BackfillAll} {
		t.Run(string(only), func(t *testing.T) {
			recreateStores(t, func(t *testing.T, st recreateStore) {
				ctx := context.Background()
				x := newSlowJobs(t, st, nil)
				t0 := time.Now()
				// Daily at 03:00, 04:00 and 05:00 from two days back; the
				// bubble's clock starts at midnight.
				x.put(t, "slowpast", 5, `, "startTime": "`+t0.Add(-48*time.Hour).Format(time.RFC3339)+
					`", "recurrence": {"frequency": "Day", "schedule": {"hours": [3, 4, 5], "minutes": [0]}}`)
				from, to := t0.Add(-21*time.Hour), t0.Add(-19*time.Hour)
				want := []time.Time{from, from.Add(time.Hour), to}
				opts := &scheduler.BackfillOptions{Only: only}
				got, err := x.s.BackfillJob(ctx, "c", "slowpast", from, to, opts)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("first backfill (-want +got):\n%s", diff)
				}
				time.Sleep(2 * time.Second) // the first occurrence runs, the others wait
				for _, o := range []*scheduler.BackfillOptions{{Only: only, DryRun: true}, opts, opts} {
					if got, err := x.s.BackfillJob(ctx, "c", "slowpast", from, to, o); err != nil || len(got) != 0 {
						t.Errorf("backfill %+v while the first one's run = %v, %v; want none", o, got, err)
					}
				}
				time.Sleep(time.Minute)
				calls := x.attempts()
				var expected []time.Time
				tags := map[string]bool{}
				for _, c := range calls {
					expected = append(expected, c.Expected)
					tags[c.Tag] = true
				}
				if diff := cmp.Diff(want, expected); diff != "" {
					t.Errorf("expected times of the attempts (-want +got):\n%s", diff)
				}
				if len(tags) != len(calls) {
					t.Errorf("%d execution tags for %d attempts, want one each", len(tags), len(calls))
				}
				got, err = x.s.BackfillJob(ctx, "c", "slowpast", from, to, opts)
				if only == scheduler.BackfillAll {
					if err != nil || !cmp.Equal(want, got) {
						t.Errorf("backfill of All once they ran = %v, %v; want all three again", got, err)
					}
				} else if err != nil || len(got) != 0 {
					t.Errorf("backfill of Missing once they ran = %v, %v; want none", got, err)
				}
			})
		})
	}
}

// TestBackfillTwoSchedulers: two Schedulers over one store that backfill
// the same range at once run each occurrence once between them.
func TestBackfillTwoSchedulers(t *testing.T) {
	recreateStores(t, func(t *testing.T, st recreateStore) {
		ctx := context.Background()
		x := newSlowJobs(t, st, nil)
		other, err := scheduler.New(st, &scheduler.Config{InstanceID: "b", Logger: discard})
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		x.put(t, "slowpast", 5, `, "startTime": "`+t0.Add(-48*time.Hour).Format(time.RFC3339)+
			`", "recurrence": {"frequency": "Day", "schedule": {"hours": [3, 4, 5], "minutes": [0]}}`)
		from, to := t0.Add(-21*time.Hour), t0.Add(-19*time.Hour)
		var wg sync.WaitGroup
		answers := make([][]time.Time, 2)
		for i, s := range []*scheduler.Scheduler{x.s, other} {
			wg.Go(func() {
				got, err := s.BackfillJob(ctx, "c", "slowpast", from, to, nil)
				if err != nil {
					t.Error(err)
				}
				answers[i] = got
			})
		}
		wg.Wait()
		if n := len(answers[0]) + len(answers[1]); n != 3 {
			t.Errorf("the two backfills answered %v and %v, want three occurrences between them", answers[0], answers[1])
		}
		time.Sleep(time.Minute)
		if calls := x.attempts(); len(calls) != 3 {
			t.Errorf("%d attempts, want 3: %v", len(calls), calls)
		}
	})
}
