package scheduler_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	httpaction "github.com/jobclock/scheduler/action/http"
	"github.com/jobclock/scheduler/store/memory"
)

// pipeNet is an in-memory network: DialContext returns one end of a
// net.Pipe and Accept the other, so that a real HTTP client and server run
// inside a synctest bubble, whose clock is fake.
type pipeNet struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeNet() *pipeNet { return &pipeNet{conns: make(chan net.Conn), done: make(chan struct{})} }

func (p *pipeNet) DialContext(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case p.conns <- server:
		return client, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-p.done:
		return nil, net.ErrClosed
	}
}

func (p *pipeNet) Accept() (net.Conn, error) {
	select {
	case c := <-p.conns:
		return c, nil
	case <-p.done:
		return nil, net.ErrClosed
	}
}

func (p *pipeNet) Close() error {
	p.once.Do(func() { close(p.done) })
	return nil
}

func (p *pipeNet) Addr() net.Addr { return &net.UnixAddr{Name: "pipe", Net: "pipe"} }

// TestReceiverThatNeverAnswers runs jobs through the scheduler and the
// real HTTP executor against a receiver that never answers some of them:
// those attempts fail when the action timeout passes, and while they hang
// the other workers keep running the other jobs on time.
func TestReceiverThatNeverAnswers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const timeout = 30 * time.Second
		var stuckOpen, stuckClosed atomic.Int32
		var mu sync.Mutex
		var hist []scheduler.HistoryEntry
		s := startPipeScheduler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, "/stuck") {
				stuckOpen.Add(1)
				<-r.Context().Done() // never answers; returns when the client gives up
				stuckClosed.Add(1)
				return
			}
			w.Write([]byte("ok"))
		}), &httpaction.Options{Timeout: timeout}, scheduler.Config{
			MaxConcurrency: 3,
			ActionTimeout:  timeout,
			OnHistory: func(h scheduler.HistoryEntry) {
				mu.Lock()
				hist = append(hist, h)
				mu.Unlock()
			},
		})
		ctx := context.Background()
		t0 := time.Now().Truncate(time.Second).Add(time.Second)
		put := func(name, path string, at time.Time) {
			t.Helper()
			job, err := scheduler.ParseJob([]byte(fmt.Sprintf(`{"startTime": %q, "action": {"type": "Http",
				"request": {"uri": "http://receiver%s", "method": "GET"}, "retryPolicy": {"retryType": "None"}}}`,
				at.UTC().Format(time.RFC3339), path)), nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.PutJob(ctx, "c", name, job, nil); err != nil {
				t.Fatal(err)
			}
		}
		// Two of the three workers hang on the receiver...
		put("stuck-1", "/stuck", t0)
		put("stuck-2", "/stuck", t0)
		// ...while a job is due every second for 20 seconds.
		for i := 1; i <= 20; i++ {
			put(fmt.Sprintf("on-time-%02d", i), "/ok", t0.Add(time.Duration(i)*time.Second))
		}

		time.Sleep(time.Until(t0) + timeout + 5*time.Second)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		got := map[string]scheduler.HistoryEntry{}
		for _, h := range hist {
			if _, dup := got[h.Job]; dup {
				t.Errorf("job %s has more than one attempt", h.Job)
			}
			got[h.Job] = h
		}
		if len(got) != 22 {
			t.Fatalf("history has %d jobs, want 22: %v", len(got), hist)
		}
		for name, h := range got {
			late := h.StartTime.Sub(h.ExpectedExecutionTime)
			if strings.HasPrefix(name, "stuck") {
				took := h.EndTime.Sub(h.StartTime)
				if h.Status != scheduler.StatusFailed || took != timeout || !strings.Contains(h.Message, "timed out") {
					t.Errorf("%s: %s after %v (%q), want Failed after the %v action timeout saying it timed out", name, h.Status, took, h.Message, timeout)
				}
				continue
			}
			if h.Status != scheduler.StatusCompleted || late != 0 {
				t.Errorf("%s: %s, started %v late; want Completed on time while two workers hang", name, h.Status, late)
			}
		}
		if o, c := stuckOpen.Load(), stuckClosed.Load(); o != 2 || c != 2 {
			t.Errorf("receiver: %d hanging requests, %d closed by the client; want 2 and 2", o, c)
		}
	})
}

// startPipeScheduler starts a Scheduler on a memory store with a job
// collection "c", whose HTTP executor (made with opts) reaches receiver at
// any host through a pipeNet; cfg gives the rest of its Config. Everything
// is stopped when the test ends, which must be inside a synctest bubble.
func startPipeScheduler(t *testing.T, receiver http.Handler, opts *httpaction.Options, cfg scheduler.Config) *scheduler.Scheduler {
	t.Helper()
	network := newPipeNet()
	srv := &http.Server{Handler: receiver}
	go srv.Serve(network)
	o := *opts
	o.Client = &http.Client{Transport: &http.Transport{DialContext: network.DialContext}}
	exec := httpaction.New(&o)
	cfg.Executors = new(action.Registry)
	cfg.Executors.Register(action.HTTP, exec)
	cfg.Logger = slog.New(slog.DiscardHandler)
	s, err := scheduler.New(memory.New(), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
		exec.Close()
		srv.Close()
		network.Close()
	})
	if _, err := s.PutCollection(ctx, "c", nil, nil); err != nil {
		t.Fatal(err)
	}
	return s
}
