package telemetry_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/store/memory"
)

// The helpers below are those of the library's engine tests
// (engine_test.go) that the telemetry tests use, copied: test files are
// not shared across modules.

// fake is an executor that records its calls and answers with fn.
type fake struct {
	mu    sync.Mutex
	calls int
	fn    func(req *action.Request, n int) error
}

func (f *fake) Execute(ctx context.Context, req *action.Request) (*action.Result, error) {
	f.mu.Lock()
	n := f.calls
	f.calls++
	fn := f.fn
	f.mu.Unlock()
	if fn == nil {
		return &action.Result{Message: "ok"}, nil
	}
	if err := fn(req, n); err != nil {
		return &action.Result{Message: "failed"}, err
	}
	return &action.Result{Message: "ok"}, nil
}

// env is a scheduler over a memory store with a fake executor for Http.
type env struct {
	t     *testing.T
	store *memory.Store
	exec  *fake
	s     *scheduler.Scheduler
	t0    time.Time
	cfg   scheduler.Config
}

func newEnv(t *testing.T, cfg scheduler.Config) *env {
	t.Helper()
	e := &env{t: t, store: memory.New(), exec: &fake{}, t0: time.Now()}
	reg := &action.Registry{}
	reg.Register(action.HTTP, e.exec)
	reg.Register(action.HTTPS, e.exec)
	cfg.Executors = reg
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MinRetryInterval == 0 {
		cfg.MinRetryInterval = time.Second
	}
	e.cfg = cfg
	e.s = e.newScheduler()
	if _, err := e.s.PutCollection(context.Background(), "c", nil, nil); err != nil {
		t.Fatalf("PutCollection: %v", err)
	}
	return e
}

func (e *env) newScheduler() *scheduler.Scheduler {
	s, err := scheduler.New(e.store, &e.cfg)
	if err != nil {
		e.t.Fatalf("New: %v", err)
	}
	return s
}

func (e *env) start() {
	if err := e.s.Start(context.Background()); err != nil {
		e.t.Fatalf("Start: %v", err)
	}
}

func (e *env) stop() {
	if err := e.s.Stop(context.Background()); err != nil {
		e.t.Fatalf("Stop: %v", err)
	}
}

// put parses a job definition and puts it as c/name.
func (e *env) put(name, def string) *scheduler.JobRecord {
	e.t.Helper()
	job, err := scheduler.ParseJob([]byte(def), &scheduler.ParseOptions{MinRetryInterval: time.Second})
	if err != nil {
		e.t.Fatalf("ParseJob: %v", err)
	}
	r, err := e.s.PutJob(context.Background(), "c", name, job, nil)
	if err != nil {
		e.t.Fatalf("PutJob(%s): %v", name, err)
	}
	return r
}

func (e *env) history(name string) []scheduler.HistoryEntry {
	e.t.Helper()
	h, err := e.store.ListHistory(context.Background(), "c", name, scheduler.HistoryFilter{})
	if err != nil {
		e.t.Fatalf("ListHistory(%s): %v", name, err)
	}
	return h
}

const hello = `{"type": "Http", "request": {"uri": "http://127.0.0.1:9/hello", "method": "POST", "body": "hi"}`

// jobJSON is a job starting at start (none when zero) with the members
// extra, whose action is hello unless extra gives one.
func jobJSON(start time.Time, extra string) string {
	var members []string
	if !strings.Contains(extra, `"action"`) {
		members = append(members, `"action": `+hello+`}`)
	}
	if !start.IsZero() {
		members = append(members, `"startTime": "`+start.Format(time.RFC3339)+`"`)
	}
	if extra != "" {
		members = append(members, extra)
	}
	return "{" + strings.Join(members, ", ") + "}"
}
