package scheduler_test

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/internal/syncbuf"
	"github.com/jobclock/scheduler/store/memory"
	"github.com/jobclock/scheduler/store/sqlite"
)

// TestCalendarChangeReplans: a calendar replaced to exclude the day of a
// job's planned occurrence skips it or moves it at once, as the job's
// onExcluded says (GetJob shows the new instant, and the engine runs it
// there); one replaced so that the day that moved the occurrence is no
// longer excluded brings it back to its scheduled instant; a move into
// the past runs as a missed occurrence; count still counts the
// occurrences that run. The job runs every 2 days from 2000-01-02
// (synctest's epoch is 2000-01-01); the calendar changes after the first
// occurrence ran.
func TestCalendarChangeReplans(t *testing.T) {
	day := 24 * time.Hour
	none := `{"properties": {"dates": ["1999-01-01"]}}`
	holiday := `{"properties": {"dates": ["2000-01-04"]}}` // 3d
	every2 := func(extra string) string {
		return `"recurrence": {"frequency": "Day", "interval": 2, "calendar": "cal"` + extra + `}`
	}
	tests := []struct {
		name           string
		before, after  string // the calendar before and after the change
		recurrence     string
		change         time.Duration // when the calendar changes
		wantNext       time.Duration // the job's nextExecutionTime after the change
		wantAttempts   []time.Duration
		wantSkips      []skip
		wantEndedFinal bool
	}{
		{"Skip", none, holiday, every2(""), day + 12*time.Hour, 5 * day,
			[]time.Duration{day, 5 * day, 7 * day}, []skip{{3 * day, 3 * day, 1, day + 12*time.Hour}}, false},
		{"NextIncluded", none, holiday, every2(`, "onExcluded": "NextIncluded"`), day + 12*time.Hour, 4 * day,
			[]time.Duration{day, 4 * day, 5 * day, 7 * day}, nil, false},
		{"PreviousIncluded", none, holiday, every2(`, "onExcluded": "PreviousIncluded"`), day + 12*time.Hour, 2 * day,
			[]time.Duration{day, 2 * day, 5 * day, 7 * day}, nil, false},
		{"NextIncluded back", holiday, none, every2(`, "onExcluded": "NextIncluded"`), day + 12*time.Hour, 3 * day,
			[]time.Duration{day, 3 * day, 5 * day, 7 * day}, nil, false},
		{"PreviousIncluded back", holiday, none, every2(`, "onExcluded": "PreviousIncluded"`), day + 12*time.Hour, 3 * day,
			[]time.Duration{day, 3 * day, 5 * day, 7 * day}, nil, false},
		// Moved to 2000-01-03 when that day has begun: it runs at once,
		// late.
		{"PreviousIncluded into the past", none, holiday, every2(`, "onExcluded": "PreviousIncluded"`), 2*day + 12*time.Hour, 2 * day,
			[]time.Duration{day, 2*day + 12*time.Hour, 5 * day, 7 * day}, nil, false},
		{"count", none, holiday, every2(`, "count": 2`), day + 12*time.Hour, 5 * day,
			[]time.Duration{day, 5 * day}, []skip{{3 * day, 3 * day, 1, day + 12*time.Hour}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, scheduler.Config{})
				gate := &claimGate{Store: e.store}
				e.over(gate)
				e.putCalendar("cal", tt.before)
				e.start()
				e.put("j", jobJSON(e.t0.Add(day), tt.recurrence))
				time.Sleep(tt.change)
				synctest.Wait()
				// The change wakes the loop, which would at once run an
				// occurrence moved into the past and plan the next: it
				// waits to claim until the change's instant is read.
				gate.hold()
				e.putCalendar("cal", tt.after)
				synctest.Wait()
				got, err := e.s.GetJob(context.Background(), "c", "j")
				gate.open()
				if err != nil {
					t.Fatal(err)
				}
				if n := got.Status.NextExecutionTime; n == nil || n.Sub(e.t0) != tt.wantNext {
					t.Errorf("nextExecutionTime after the change: %v, want t0+%v", n, tt.wantNext)
				}
				time.Sleep(8*day - tt.change)
				synctest.Wait()
				e.stop()
				if diff := cmp.Diff(tt.wantAttempts, e.exec.times(e.t0)); diff != "" {
					t.Errorf("attempt times (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(tt.wantSkips, e.skipRows("j")); diff != "" {
					t.Errorf("Skipped entries (-want +got):\n%s", diff)
				}
				if final := e.job("j").State.Final(); final != tt.wantEndedFinal {
					t.Errorf("job in a final state: %v, want %v", final, tt.wantEndedFinal)
				}
			})
		})
	}
}

// claimGate is a memory store whose claims wait while it is held.
type claimGate struct {
	*memory.Store
	mu     sync.Mutex
	closed chan struct{} // nil: open
}

func (g *claimGate) hold() {
	g.mu.Lock()
	g.closed = make(chan struct{})
	g.mu.Unlock()
}

func (g *claimGate) open() {
	g.mu.Lock()
	close(g.closed)
	g.closed = nil
	g.mu.Unlock()
}

// wait waits until the gate is open; a channel, so that synctest sees a
// claim that waits as durably blocked.
func (g *claimGate) wait() {
	g.mu.Lock()
	c := g.closed
	g.mu.Unlock()
	if c != nil {
		<-c
	}
}

func (g *claimGate) ClaimDue(ctx context.Context, now time.Time, owner string, leaseUntil time.Time, limit int) ([]*scheduler.JobRecord, error) {
	g.wait()
	return g.Store.ClaimDue(ctx, now, owner, leaseUntil, limit)
}

func (g *claimGate) ClaimDueBy(ctx context.Context, c scheduler.ClaimRequest) ([]*scheduler.JobRecord, error) {
	g.wait()
	return g.Store.ClaimDueBy(ctx, c)
}

// TestCalendarChangeTwoInstances: two Schedulers over one SQLite store,
// one that writes the calendar and one that runs the job, whose cached
// copy of the collection (read for another job 2 s before the change) is
// older than the change. The runner runs the occurrence where the writer
// planned it under the new calendar, not where its older copy would put
// it; and an occurrence it planned under its older copy (taking the one
// before 1 s after the change) that the new calendar excludes does not
// run. The job runs every 2 days from 2000-01-02.
func TestCalendarChangeTwoInstances(t *testing.T) {
	day := 24 * time.Hour
	tests := []struct {
		name, before, after, onExcluded string
		wantNext                        time.Duration // nextExecutionTime 1 h after the change, through the writer
		wantAttempts                    []time.Duration
		wantSkipped                     []time.Duration
	}{
		// The old calendar moved 3d to 4d; the new one brings it back.
		{"plan newer than the cache", `{"properties": {"dates": ["2000-01-04"]}}`, `{"properties": {"dates": ["1999-01-01"]}}`, "NextIncluded",
			5 * day, []time.Duration{day, 3*day - 2*time.Second, 3 * day, 3 * day, 5 * day, 7 * day}, nil},
		// The runner takes 3d with its older copy and plans 5d, which the
		// new calendar excludes.
		{"cache older than the change", `{"properties": {"dates": ["1999-01-01"]}}`, `{"properties": {"dates": ["2000-01-06"]}}`, "Skip",
			7 * day, []time.Duration{day, 3*day - 2*time.Second, 3 * day, 3 * day, 7 * day}, []time.Duration{5 * day}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				t0 := time.Now()
				st, exec, newScheduler := sqliteInstances(t, time.Hour)
				writer, runner := newScheduler("writer"), newScheduler("runner")
				if _, err := writer.PutCollection(ctx, "c", nil, nil); err != nil {
					t.Fatal(err)
				}
				putCalendar := func(def string) {
					if _, err := writer.PutCalendar(ctx, "c", "cal", calendarOf(t, def), nil); err != nil {
						t.Fatal(err)
					}
				}
				putCalendar(tt.before)
				put := func(name, def string) {
					job, err := scheduler.ParseJob([]byte(def), nil)
					if err != nil {
						t.Fatal(err)
					}
					if _, err := writer.PutJob(ctx, "c", name, job, nil); err != nil {
						t.Fatal(err)
					}
				}
				put("j", jobJSON(t0.Add(day), `"recurrence": {"frequency": "Day", "interval": 2, "calendar": "cal", "onExcluded": "`+tt.onExcluded+`"}`))
				// The runner reads the collection for the first, and wakes
				// at 3d for the second, whatever it holds of j.
				put("tick", jobJSON(t0.Add(3*day-2*time.Second), ""))
				put("tock", jobJSON(t0.Add(3*day), ""))
				if err := runner.Start(ctx); err != nil {
					t.Fatal(err)
				}
				defer runner.Stop(ctx)
				time.Sleep(3*day - time.Second)
				putCalendar(tt.after)
				time.Sleep(time.Hour)
				got, err := writer.GetJob(ctx, "c", "j")
				if err != nil {
					t.Fatal(err)
				}
				if n := got.Status.NextExecutionTime; n == nil || n.Sub(t0) != tt.wantNext {
					t.Errorf("nextExecutionTime 1 h after the change: %v, want t0+%v", n, tt.wantNext)
				}
				time.Sleep(5 * day)
				synctest.Wait()
				if diff := cmp.Diff(tt.wantAttempts, exec.times(t0)); diff != "" {
					t.Errorf("attempts of the runner (-want +got):\n%s", diff)
				}
				h, err := st.ListHistory(ctx, "c", "j", scheduler.HistoryFilter{Status: scheduler.StatusSkipped})
				if err != nil {
					t.Fatal(err)
				}
				var skipped []time.Duration
				for _, e := range h {
					skipped = append(skipped, e.ExpectedExecutionTime.Sub(t0))
				}
				if diff := cmp.Diff(tt.wantSkipped, skipped); diff != "" {
					t.Errorf("skipped occurrences (-want +got):\n%s", diff)
				}
			})
		})
	}
}

// sqliteInstances opens a SQLite store for t, closed when t ends, and
// returns it, the executor of its Schedulers, and a function that makes a
// Scheduler over it with an instance ID and poll interval poll.
func sqliteInstances(t *testing.T, poll time.Duration) (*sqlite.Store, *fake, func(id string) *scheduler.Scheduler) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "jobs.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	exec := &fake{}
	reg := &action.Registry{}
	reg.Register(action.HTTP, exec)
	return st, exec, func(id string) *scheduler.Scheduler {
		s, err := scheduler.New(st, &scheduler.Config{InstanceID: id, Executors: reg, Logger: discard, PollInterval: poll})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
}

// calendarOf parses a calendar.
func calendarOf(t *testing.T, def string) *scheduler.Calendar {
	t.Helper()
	c, err := scheduler.ParseCalendar([]byte(def))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// failingPuts is a memory store whose PutJob fails while fail is set.
type failingPuts struct {
	*memory.Store
	fail atomic.Bool
}

func (f *failingPuts) PutJob(ctx context.Context, j *scheduler.JobRecord) error {
	if f.fail.Load() {
		return errors.New("the disk is on fire")
	}
	return f.Store.PutJob(ctx, j)
}

// TestCalendarReplanNotWritten: a job that a calendar change plans again
// but whose new plan the store does not take is logged as an error
// naming the collection, the job and the calendar; the engine still
// skips the occurrence the new calendar excludes when it comes due.
func TestCalendarReplanNotWritten(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		day := 24 * time.Hour
		st := &failingPuts{Store: memory.New()}
		var log syncbuf.Buffer
		exec := &fake{}
		reg := &action.Registry{}
		reg.Register(action.HTTP, exec)
		s, err := scheduler.New(st, &scheduler.Config{Executors: reg, Logger: slog.New(slog.NewTextHandler(&log, nil))})
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		if _, err := s.PutCollection(ctx, "c", nil, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutCalendar(ctx, "c", "cal", calendarOf(t, `{"properties": {"dates": ["1999-01-01"]}}`), nil); err != nil {
			t.Fatal(err)
		}
		job, err := scheduler.ParseJob([]byte(jobJSON(t0.Add(day), `"recurrence": {"frequency": "Day", "calendar": "cal"}`)), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutJob(ctx, "c", "j", job, nil); err != nil {
			t.Fatal(err)
		}
		st.fail.Store(true)
		if _, err := s.PutCalendar(ctx, "c", "cal", calendarOf(t, `{"properties": {"dates": ["2000-01-02"]}}`), nil); err != nil {
			t.Fatal(err)
		}
		st.fail.Store(false)
		got := log.String()
		if !strings.Contains(got, "level=ERROR") || !strings.Contains(got, "collection=c job=j calendar=cal") {
			t.Errorf("log = %q, want an error naming collection c, job j and calendar cal", got)
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2*day + time.Hour)
		synctest.Wait()
		if err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]time.Duration{2 * day}, exec.times(t0)); diff != "" {
			t.Errorf("attempts (-want +got):\n%s", diff)
		}
	})
}

// TestCalendarChangeWhileRunning: a calendar replaced to exclude the day
// of the occurrence that is running leaves that occurrence alone: it ends
// once, counted, and the next one runs where it is planned. The job runs
// every 2 days from 2000-01-02 with count 2; its first attempt takes 10 s
// and the calendar changes 5 s into it.
func TestCalendarChangeWhileRunning(t *testing.T) {
	day := 24 * time.Hour
	for _, onExcluded := range []string{"Skip", "NextIncluded", "PreviousIncluded"} {
		t.Run(onExcluded, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, scheduler.Config{})
				e.exec.fn = func(_ *action.Request, n int) error {
					if n == 0 {
						time.Sleep(10 * time.Second)
					}
					return nil
				}
				e.putCalendar("cal", `{"properties": {"dates": ["1999-01-01"]}}`)
				e.start()
				e.put("j", jobJSON(e.t0.Add(day), `"recurrence": {"frequency": "Day", "interval": 2, "count": 2, "calendar": "cal", "onExcluded": "`+onExcluded+`"}`))
				time.Sleep(day + 5*time.Second)
				synctest.Wait()
				e.putCalendar("cal", `{"properties": {"dates": ["2000-01-02"]}}`)
				time.Sleep(6 * day)
				synctest.Wait()
				e.stop()
				if diff := cmp.Diff([]time.Duration{day, 3 * day}, e.exec.times(e.t0)); diff != "" {
					t.Errorf("attempt times (-want +got):\n%s", diff)
				}
				if j := e.job("j"); j.State != scheduler.JobCompleted {
					t.Errorf("state %s, want Completed", j.State)
				}
			})
		})
	}
}
