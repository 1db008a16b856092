package scheduler_test

import (
	"context"
	"log/slog"
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

// TestOutageSeenBySaturatedLoop checks that an instance whose loop made no
// call during an outage (it ran at its MaxConcurrency all along) still
// holds off the takeover of leases that expired meanwhile: b's attempt
// ends during the outage, and a's long attempt ends just after the store
// came back, before b finds it back; a must not take over b's expired
// lease and run the occurrence again.
//
// Over a store that is no AheadClaimer the loop's own failures alone start
// the grace (doc.go: the grace would hold back the jobs that came due
// too), so the test runs over an AheadClaimer only.
func TestOutageSeenBySaturatedLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) { testSaturatedOutage(t, true) })
}

func testSaturatedOutage(t *testing.T, ahead bool) {
	const (
		outage = 26 * time.Second
		later  = 700 * time.Millisecond
	)
	ctx := context.Background()
	mem := memory.New()
	var down atomic.Bool
	var backAt atomic.Int64
	cuts := map[string]func() bool{
		"a": down.Load,
		"b": func() bool { return down.Load() || time.Now().UnixNano() < backAt.Load()+int64(later) },
	}
	var mu sync.Mutex
	runs := make(map[string]map[string]int) // job -> instance -> n
	work := func(id string) action.Executor {
		return action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			name := req.Action.Request.URI
			mu.Lock()
			if runs[name] == nil {
				runs[name] = map[string]int{}
			}
			runs[name][id]++
			first := name == "http://once/" && runs[name][id] == 1 && id == "b"
			mu.Unlock()
			if first {
				time.AfterFunc(time.Second, func() {
					down.Store(true)
					time.AfterFunc(outage, func() {
						backAt.Store(time.Now().UnixNano())
						down.Store(false)
					})
				})
			}
			if name == "http://long/" {
				// Ends just after the store comes back.
				for backAt.Load() == 0 {
					time.Sleep(50 * time.Millisecond)
				}
				time.Sleep(100 * time.Millisecond)
				return &action.Result{Message: "long done"}, nil
			}
			time.Sleep(5 * time.Second) // ends during the outage
			return &action.Result{Message: "done"}, nil
		})
	}
	ss := map[string]*scheduler.Scheduler{}
	logs := map[string]*syncbuf.Buffer{}
	for _, id := range []string{"a", "b"} {
		var st scheduler.Store = &cutStore{Store: mem, cut: cuts[id]}
		if ahead {
			st = cutAheadStore{st.(*cutStore), mem}
		}
		logs[id] = new(syncbuf.Buffer)
		reg := &action.Registry{}
		reg.Register(action.HTTP, work(id))
		cfg := &scheduler.Config{Executors: reg, InstanceID: id, Logger: slog.New(slog.NewTextHandler(logs[id], nil))}
		if id == "a" {
			cfg.MaxConcurrency = 1
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
	put := func(name, uri string, at time.Time) {
		if _, err := ss["a"].PutJob(ctx, "c", name, &scheduler.Job{StartTime: &at, Action: action.Action{Type: action.HTTP,
			Request: &action.HTTPRequest{URI: uri, Method: "GET"}}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := ss["a"].Start(ctx); err != nil {
		t.Fatal(err)
	}
	put("long", "http://long/", time.Now().Add(500*time.Millisecond))
	time.Sleep(2 * time.Second) // a runs long: saturated
	if err := ss["b"].Start(ctx); err != nil {
		t.Fatal(err)
	}
	put("once", "http://once/", time.Now().Add(time.Second))
	time.Sleep(outage + 2*time.Minute)
	for _, id := range []string{"a", "b"} {
		stopCtx, cancel := context.WithTimeout(ctx, time.Minute)
		if err := ss[id].Stop(stopCtx); err != nil {
			t.Errorf("Stop %s: %v", id, err)
		}
		cancel()
	}
	mu.Lock()
	defer mu.Unlock()
	hist, _ := mem.ListHistory(ctx, "c", "once", scheduler.HistoryFilter{})
	n := 0
	for _, c := range runs["http://once/"] {
		n += c
	}
	if n != 1 {
		t.Errorf("once ran %v times by instance (%d), want once on b; history %d entries", runs["http://once/"], n, len(hist))
		for _, h := range hist {
			t.Logf("%s %s", h.Status, h.Message)
		}
	}
}
