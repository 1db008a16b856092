package scheduler

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jobclock/scheduler/action"
)

// nopObserver is an Observer that does nothing.
type nopObserver struct{}

func (nopObserver) Attach(*Scheduler) func()                                     { return func() {} }
func (nopObserver) StartAttempt(ctx context.Context, _ Attempt) context.Context  { return ctx }
func (nopObserver) EndAttempt(context.Context, AttemptEnd)                       {}
func (nopObserver) HistoryStored(StoredHistory)                                  {}
func (nopObserver) Missed(Misfire)                                               {}
func (nopObserver) TookOver(Takeover)                                            {}
func (nopObserver) StoreCalled(StoreCall)                                        {}
func (nopObserver) Pruned(int)                                                   {}
func (nopObserver) TraceParent(context.Context) (traceparent, tracestate string) { return "", "" }

// quietStore answers the run loop's calls at once.
type quietStore struct{ nopStore }

func (quietStore) ClaimDue(context.Context, time.Time, string, time.Time, int) ([]*JobRecord, error) {
	return nil, nil
}
func (quietStore) Record(context.Context, string, *JobRecord, []HistoryEntry) error { return nil }
func (quietStore) GetCollection(_ context.Context, name string) (*CollectionRecord, error) {
	return &CollectionRecord{Name: name}, nil
}
func (quietStore) RecordBatch(context.Context, string, []RecordRequest) []error {
	return nil // every record stored
}

// TestObserverEventsAllocateNothing: describing an ordinary attempt to an
// Observer (its start and end, the store calls, the history stored, the
// check for missed occurrences) costs the Scheduler no allocation.
func TestObserverEventsAllocateNothing(t *testing.T) {
	s, err := New(quietStore{}, &Config{Logger: slog.New(slog.DiscardHandler), Observer: nopObserver{}})
	if err != nil {
		t.Fatal(err)
	}
	def := &Job{Action: action.Action{Type: action.HTTP}}
	now := time.Now()
	r := &JobRecord{Collection: "c", Name: "j", Job: def, Schedule: JobSchedule{NextOccurrence: now.Add(time.Minute)}}
	tm, err := def.Timing(r.Collection, r.Name, now)
	if err != nil {
		t.Fatal(err)
	}
	o := &Occurrence{Number: 1, Expected: now, At: now, Tag: "t"}
	res := &outcome{start: now, end: now.Add(time.Second), err: errors.New("boom")}
	hist := []HistoryEntry{{Collection: "c", Job: "j", ActionName: MainAction, Status: StatusCompleted, StartTime: now, EndTime: now.Add(time.Second)}}
	reqs := []RecordRequest{{Job: r, History: hist}}
	ctx := context.Background()
	obs := s.cfg.Observer
	n := testing.AllocsPerRun(1000, func() {
		actx := obs.StartAttempt(ctx, s.attemptStart(r, o, &def.Action, now, attemptInfo{}))
		obs.EndAttempt(actx, AttemptEnd{End: res.end})
		s.missed(s.passedOver(r, tm, r.Schedule.NextOccurrence, 0, MisfireRunOnce, now), false)
		s.emit(def, hist)
		s.runStore.ClaimDue(ctx, now, "a", now, 1)
		s.runStore.Record(ctx, "a", r, hist)
		s.batch.RecordBatch(ctx, "a", reqs)
	})
	if n != 0 {
		t.Errorf("an attempt's events: %v allocations, want 0", n)
	}
}

// recorder is an Observer that keeps the events it is told.
type recorder struct {
	nopObserver
	events chan any
}

func (r recorder) StartAttempt(ctx context.Context, a Attempt) context.Context {
	r.events <- a
	return ctx
}
func (r recorder) EndAttempt(_ context.Context, e AttemptEnd) { r.events <- e }
func (r recorder) HistoryStored(h StoredHistory) {
	h.Entries = append([]HistoryEntry(nil), h.Entries...) // the Scheduler's, until the call returns
	r.events <- h
}
func (r recorder) StoreCalled(c StoreCall) {
	c.Duration = 0
	r.events <- c
}

// TestObserverSeesAnAttempt: an attempt that fails, told to an Observer in
// order: its start with what describes it, its end with the error and its
// type, the store calls of the run loop as the decorated store makes them,
// and the history stored.
func TestObserverSeesAnAttempt(t *testing.T) {
	rec := recorder{events: make(chan any, 100)}
	reg := &action.Registry{}
	reg.Register(action.HTTP, action.ExecutorFunc(func(context.Context, *action.Request) (*action.Result, error) {
		return nil, errors.New("boom")
	}))
	st := quietStore{}
	s, err := New(st, &Config{Logger: slog.New(slog.DiscardHandler), Observer: rec, Executors: reg, InstanceID: "a"})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	def := &Job{Action: action.Action{Type: action.HTTP}}
	r := &JobRecord{Collection: "c", Name: "j", Job: def, State: JobEnabled, Schedule: JobSchedule{NextOccurrence: now},
		LeaseOwner: "a", LeaseUntil: now.Add(s.cfg.LeaseDuration)} // as claimed
	s.wg.Add(1)
	s.inFlight.Add(1)
	s.process(context.Background(), task{r: r, now: now}, nil)
	var got []any
	for len(rec.events) > 0 {
		got = append(got, <-rec.events)
	}
	if len(got) != 4 {
		t.Fatalf("events = %+v, want 4", got)
	}
	a, _ := got[0].(Attempt)
	want := Attempt{Instance: "a", Collection: "c", Job: "j", ActionType: action.HTTP, ActionName: MainAction,
		Occurrence: 1, Expected: now, Due: now, Start: a.Start, Tag: a.Tag}
	if diff := cmp.Diff(want, a); diff != "" || a.Tag == "" || a.Start.Before(now) {
		t.Errorf("StartAttempt (-want +got):\n%s", diff)
	}
	if e, _ := got[1].(AttemptEnd); e.Err == nil || e.Err.Error() != "boom" || e.ErrorType != "*errors.errorString" || e.End.Before(a.Start) {
		t.Errorf("EndAttempt = %+v, want boom, *errors.errorString", got[1])
	}
	if c, _ := got[2].(StoreCall); c.Op != "RecordBatch" || len(c.Errs) != 1 || c.Errs[0] != nil {
		t.Errorf("StoreCalled = %+v, want a RecordBatch of one record", got[2])
	}
	if h, _ := got[3].(StoredHistory); h.Instance != "a" || h.Job != def || len(h.Entries) != 1 || h.Entries[0].Status != StatusFailed {
		t.Errorf("HistoryStored = %+v, want the failed attempt's entry", got[3])
	}
}

// appender is an Observer that extends a RecordBatch call's Errs with an
// error of its own (an append, which does not modify them), and keeps a
// copy of each call's Errs.
type appender struct {
	nopObserver
	seen [][]error
}

func (a *appender) StoreCalled(c StoreCall) {
	if c.Op != opRecordBatch {
		return
	}
	a.seen = append(a.seen, append([]error(nil), c.Errs...))
	_ = append(c.Errs, errors.New("the observer's own"))
}

// TestBatchErrsAppendCopies: an Observer that appends to the Errs of a
// batch stored whole (which every Scheduler shares) does not make the
// next batch look failed.
func TestBatchErrsAppendCopies(t *testing.T) {
	obs := &appender{}
	s, err := New(quietStore{}, &Config{Logger: slog.New(slog.DiscardHandler), Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	defer clear(noBatchErrs) // should the test fail: the next ones start clean
	ctx := context.Background()
	s.batch.RecordBatch(ctx, "a", make([]RecordRequest, 1))
	s.batch.RecordBatch(ctx, "a", make([]RecordRequest, 2))
	if len(obs.seen) != 2 {
		t.Fatalf("the Observer saw %d RecordBatch calls, want 2", len(obs.seen))
	}
	for i, errs := range obs.seen {
		for j, err := range errs {
			if err != nil {
				t.Errorf("batch %d record %d: Errs says %v for a batch stored whole", i, j, err)
			}
		}
	}
}
