package scheduler_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/internal/syncbuf"
	"github.com/jobclock/scheduler/internal/tracectx"
	"github.com/jobclock/scheduler/store/memory"
)

// panicky is an Observer whose TookOver, StartAttempt, EndAttempt and
// HistoryStored panic.
type panicky struct{ traceParent }

func (panicky) TookOver(scheduler.Takeover) { panic("TookOver fails") }
func (panicky) StartAttempt(context.Context, scheduler.Attempt) context.Context {
	panic("StartAttempt fails")
}
func (panicky) EndAttempt(context.Context, scheduler.AttemptEnd) { panic("EndAttempt fails") }
func (panicky) HistoryStored(scheduler.StoredHistory)            { panic("HistoryStored fails") }

// TestObserverPanicRecovered: an Observer whose methods panic does not take
// the Scheduler down: b takes over the lease of a job x let expire
// (TookOver, StartAttempt, EndAttempt and HistoryStored panic), then runs
// another job (all but TookOver panic again); both attempts run and their
// outcomes are recorded, and the log has one error per method that
// panicked, naming it, not one per panic.
func TestObserverPanicRecovered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := memory.New()
		var runs atomic.Int64
		var log syncbuf.Buffer
		cfg := scheduler.Config{Executors: countingRegistry(&runs), LeaseDuration: 10 * time.Second, Observer: panicky{},
			Logger: slog.New(slog.NewJSONHandler(&log, nil))}
		b := instances(t, st, cfg, "b")[0]
		ctx := context.Background()
		due := time.Now().Add(10 * time.Second)
		putClaimed(t, b, st, "x", due, due.Add(time.Second))
		other, err := scheduler.ParseJob([]byte(oneTimeAt(due.Add(5*time.Second))), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.PutJob(ctx, "c", "k", other, nil); err != nil {
			t.Fatal(err)
		}
		if err := b.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer b.Stop(ctx)
		time.Sleep(time.Until(due.Add(10 * time.Second)))
		synctest.Wait()
		if n := runs.Load(); n != 2 {
			t.Errorf("%d attempts ran, want 2", n)
		}
		for _, name := range []string{"j", "k"} {
			if r, err := b.GetJob(ctx, "c", name); err != nil || r.State != scheduler.JobCompleted || r.LeaseOwner != "" {
				t.Errorf("job %s after its attempt: %v, %v; want completed, its outcome recorded", name, r, err)
			}
		}
		errs := map[string]int{}
		for line := range strings.Lines(log.String()) {
			var r map[string]any
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("log line %q: %v", line, err)
			}
			if r["level"] == "ERROR" && strings.Contains(r["msg"].(string), "Observer") {
				m, _ := r["method"].(string)
				if p, _ := r["panic"].(string); p != m+" fails" {
					t.Errorf("error of method %s logs panic %q, want %q", m, p, m+" fails")
				}
				errs[m]++
			}
		}
		want := map[string]int{"TookOver": 1, "StartAttempt": 1, "EndAttempt": 1, "HistoryStored": 1}
		if diff := cmp.Diff(want, errs); diff != "" {
			t.Errorf("errors logged by method (-want +got):\n%s\nlog:\n%s", diff, log.String())
		}
	})
}

// ctxKey is the key of a value that a test puts in a context.
type ctxKey struct{}

// testSpan is a span that an Observer's StartAttempt puts in the
// attempt's context, as package telemetry's does.
type testSpan struct{ parent string }

func (s testSpan) Start(ctx context.Context, _, _ string, _ tracectx.Kind, _ []tracectx.Attr) (context.Context, tracectx.Span) {
	return ctx, s
}
func (testSpan) End(error, string, []tracectx.Attr)               {}
func (s testSpan) TraceContext() (traceparent, tracestate string) { return s.parent, "" }

// ctxPanicky is an Observer for TestObserverPanicLogsContext: with
// startPanics, StartAttempt panics and TraceParent returns runTrace;
// otherwise TraceParent and EndAttempt panic, and StartAttempt returns
// the attempt's context with a span of attemptTrace and a ctxKey value.
type ctxPanicky struct {
	traceParent
	startPanics bool
	ended       atomic.Int64 // EndAttempt calls that did not panic
}

const (
	runTrace     = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	attemptTrace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
)

func (o *ctxPanicky) TraceParent(context.Context) (string, string) {
	if o.startPanics {
		return runTrace, ""
	}
	panic("TraceParent fails")
}

func (o *ctxPanicky) StartAttempt(ctx context.Context, _ scheduler.Attempt) context.Context {
	if o.startPanics {
		panic("StartAttempt fails")
	}
	return tracectx.With(context.WithValue(ctx, ctxKey{}, "attempt"), testSpan{attemptTrace})
}

func (o *ctxPanicky) EndAttempt(context.Context, scheduler.AttemptEnd) {
	if !o.startPanics {
		panic("EndAttempt fails")
	}
	o.ended.Add(1)
}

// TestObserverPanicLogsContext: the panics of an Observer's methods that
// the Scheduler calls with a context are logged with that context, so
// that what the logger's handler reads from it (a trace ID) is in the
// record: TraceParent's with RunJob's caller's context, EndAttempt's with
// the attempt's context that StartAttempt returned (its span's trace_id
// and span_id are in the record), StartAttempt's with the attempt's
// context as it was given (carrying the run's trace context). The run's
// attempt runs and is recorded all the same.
func TestObserverPanicLogsContext(t *testing.T) {
	for _, startPanics := range []bool{false, true} {
		name := "TraceParent and EndAttempt"
		if startPanics {
			name = "StartAttempt"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				logs := &logRecords{}
				obs := &ctxPanicky{startPanics: startPanics}
				e := newEnv(t, scheduler.Config{Observer: obs, Logger: slog.New(logs)})
				e.start()
				defer e.stop()
				e.put("j", oneTimeAt(e.t0.Add(time.Hour)))
				ctx := context.Background()
				if _, err := e.s.RunJob(context.WithValue(ctx, ctxKey{}, "caller"), "c", "j"); err != nil {
					t.Fatalf("RunJob: %v", err)
				}
				time.Sleep(time.Minute)
				synctest.Wait()
				e.exec.mu.Lock()
				if n := len(e.exec.calls); n != 1 {
					t.Errorf("%d attempts ran, want 1", n)
				}
				e.exec.mu.Unlock()
				if h := e.history("j"); len(h) != 1 {
					t.Errorf("history %v; want the run's attempt recorded", h)
				}
				if startPanics {
					r, ok := logs.with("method", "StartAttempt")
					if !ok {
						t.Fatalf("no record of StartAttempt's panic: %+v", logs.at(slog.LevelDebug))
					}
					if tp, _ := tracectx.Parent(r.ctx); tp != runTrace {
						t.Errorf("StartAttempt's panic is logged with a context of trace %q, want the run's %q", tp, runTrace)
					}
					if n := obs.ended.Load(); n != 1 {
						t.Errorf("EndAttempt called %d times, want 1", n)
					}
					return
				}
				if r, ok := logs.with("method", "TraceParent"); !ok || r.ctx.Value(ctxKey{}) != "caller" {
					t.Errorf("TraceParent's panic is logged with %+v (found: %v), want RunJob's caller's context", r, ok)
				}
				r, ok := logs.with("method", "EndAttempt")
				if !ok || r.ctx.Value(ctxKey{}) != "attempt" || r.attrs["trace_id"] != attemptTrace[3:35] || r.attrs["span_id"] != attemptTrace[36:52] {
					t.Errorf("EndAttempt's panic is logged with %+v (found: %v), want the attempt's context, its trace_id and span_id", r, ok)
				}
			})
		})
	}
}
