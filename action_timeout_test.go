package scheduler_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	scheduler "github.com/jobclock/scheduler"
	httpaction "github.com/jobclock/scheduler/action/http"
)

// TestPerActionTimeout runs a job through the scheduler and the real HTTP
// executor against a receiver that sleeps past every timeout: each attempt
// of the main action fails after the action's own timeout (2 s, not the
// Scheduler's 60 s) saying so, is retried as its policy says, and the
// occurrence then faults; its errorAction fails after its own timeout
// (3 s). The receiver sees the context of every request cancelled.
func TestPerActionTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		cancelled := map[string]int{}
		var hist []scheduler.HistoryEntry
		stop := make(chan struct{})
		defer close(stop)
		s := startPipeScheduler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.ReadAll(r.Body) // else the server does not watch for the client closing the connection
			select {
			case <-stop:
			case <-time.After(time.Hour):
				w.Write([]byte("too late"))
			case <-r.Context().Done():
				mu.Lock()
				cancelled[r.URL.Path]++
				mu.Unlock()
			}
		}), &httpaction.Options{}, scheduler.Config{OnHistory: func(h scheduler.HistoryEntry) {
			mu.Lock()
			hist = append(hist, h)
			mu.Unlock()
		}})
		ctx := context.Background()
		job, err := scheduler.ParseJob([]byte(`{"action": {"type": "Http", "timeout": "PT2S",
			"request": {"uri": "http://receiver/slow", "method": "GET"},
			"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT30S", "retryCount": 2},
			"errorAction": {"type": "Http", "timeout": "PT3S", "request": {"uri": "http://receiver/alert", "method": "POST", "body": "x"},
				"retryPolicy": {"retryType": "None"}}}}`), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutJob(ctx, "c", "j", job, nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Minute)
		synctest.Wait()

		mu.Lock()
		defer mu.Unlock()
		type entry struct {
			Action  scheduler.ActionName
			Status  scheduler.ExecutionStatus
			Took    time.Duration
			Retry   int
			Faulted bool
		}
		var got []entry
		for _, h := range hist {
			got = append(got, entry{h.ActionName, h.Status, h.EndTime.Sub(h.StartTime), h.RetryCount, h.Faulted})
			want := "attempt timed out after 2s: "
			if h.ActionName == scheduler.ErrorAction {
				want = "attempt timed out after 3s: "
			}
			if !strings.HasPrefix(h.Message, want) {
				t.Errorf("%s attempt %d says %q, want it to start with %q", h.ActionName, h.RetryCount, h.Message, want)
			}
		}
		want := []entry{
			{scheduler.MainAction, scheduler.StatusFailed, 2 * time.Second, 0, false},
			{scheduler.MainAction, scheduler.StatusFailed, 2 * time.Second, 1, false},
			{scheduler.MainAction, scheduler.StatusFailed, 2 * time.Second, 2, true},
			{scheduler.ErrorAction, scheduler.StatusFailed, 3 * time.Second, 0, false},
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("history:\n%v\nwant\n%v", got, want)
		}
		if cancelled["/slow"] != 3 || cancelled["/alert"] != 1 {
			t.Errorf("receiver saw %v requests cancelled, want /slow 3 and /alert 1", cancelled)
		}
	})
}
