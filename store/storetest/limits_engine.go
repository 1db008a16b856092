package storetest

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
)

// RunLimits runs one Scheduler per store in stores (instances over one
// shared database, or a single store) against one loopback HTTP
// receiver, and checks collections' limits across the instances: 50 jobs
// due at once under {"key": "host", "maxConcurrent": 5} (the receiver
// takes 100 ms to answer) never have more than 5 requests at the receiver
// at once, reach 5, and each job's occurrence arrives exactly once; and
// 100 jobs under {"key": "collection", "ratePerMinute": 1200} start at
// most 20 a second (and more than a few in all: how many is the store's
// speed, not the limit's). The rate is checked in real time over 3 seconds (60
// starts), rather than over a minute: what the check needs is many starts
// spaced by the store's next-grant instant, which a high rate gives
// quickly; the memory store's rate is also checked over a minute under
// testing/synctest (TestLimitRate in the root package).
func RunLimits(t *testing.T, stores []scheduler.Store) {
	t.Helper()
	ctx := context.Background()
	var mu sync.Mutex
	running, most := 0, 0
	arrived := map[string]int{}
	var starts []time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		arrived[r.URL.Path]++
		if r.URL.Query().Get("rate") != "" {
			starts = append(starts, time.Now())
			mu.Unlock()
			return
		}
		running++
		most = max(most, running)
		mu.Unlock()
		time.Sleep(100 * time.Millisecond)
		mu.Lock()
		running--
		mu.Unlock()
	}))
	defer srv.Close()
	scheds := make([]*scheduler.Scheduler, len(stores))
	for i, st := range stores {
		s, err := scheduler.New(st, &scheduler.Config{InstanceID: fmt.Sprintf("instance-%d", i),
			PollInterval: 50 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		scheds[i] = s
	}
	run := time.Now().UnixNano() // collections of their own, for a shared database kept between runs
	put := func(name string, limit scheduler.Limit, jobs int, query string) {
		t.Helper()
		if _, err := scheds[0].PutCollection(ctx, name, &scheduler.JobCollection{Properties: scheduler.CollectionProperties{
			Quota: &scheduler.Quota{MaxJobCount: 1000}, Limits: []scheduler.Limit{limit}}}, nil); err != nil {
			t.Fatal(err)
		}
		for i := range jobs {
			job, err := scheds[0].ParseJob(fmt.Appendf(nil, `{"action": {"type": "Http", "request": {"uri": "%s/%s/%d%s", "method": "GET"}}}`,
				srv.URL, name, i, query))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := scheds[i%len(scheds)].PutJob(ctx, name, fmt.Sprintf("j%d", i), job, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	concurrent := fmt.Sprintf("concurrent%d", run)
	put(concurrent, scheduler.Limit{Key: scheduler.LimitHost, MaxConcurrent: 5}, 50, "")
	for _, s := range scheds {
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer s.Stop(ctx)
	}
	all := func(name string, jobs int) bool {
		mu.Lock()
		defer mu.Unlock()
		for i := range jobs {
			if arrived[fmt.Sprintf("/%s/%d", name, i)] == 0 {
				return false
			}
		}
		return true
	}
	deadline := time.Now().Add(30 * time.Second)
	for !all(concurrent, 50) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // for a request that would arrive twice
	mu.Lock()
	// Fewer than 5 at once is no failure of the limit: on a loaded
	// machine the instances may not keep 5 busy.
	if most > 5 {
		t.Errorf("the receiver saw %d requests at once under maxConcurrent 5 for its host, want at most 5", most)
	}
	t.Logf("the receiver saw at most %d requests at once under maxConcurrent 5", most)
	for i := range 50 {
		if n := arrived[fmt.Sprintf("/%s/%d", concurrent, i)]; n != 1 {
			t.Errorf("job j%d's occurrence arrived %d times, want once", i, n)
		}
	}
	mu.Unlock()

	rate := fmt.Sprintf("rate%d", run)
	put(rate, scheduler.Limit{Key: scheduler.LimitCollection, RatePerMinute: 1200}, 100, "?rate=1")
	time.Sleep(4 * time.Second)
	mu.Lock()
	defer mu.Unlock()
	if len(starts) == 0 {
		t.Fatalf("no job of the rate-limited collection ran")
	}
	// 20 a second: between the first arrival and the last, at most one
	// start per 50 ms, plus those that a delivery's delay (up to half a
	// second, on a loaded machine) moves into the span: measured over the
	// whole span rather than from the first arrival, which may itself be
	// late. Fewer is no failure of the limit: a store whose writes take
	// milliseconds (SQLite with synchronous FULL, under -race and a loaded
	// machine) starts fewer; fewer than a few would be.
	span := starts[len(starts)-1].Sub(starts[0])
	if most := 1 + int(span/(50*time.Millisecond)) + 10; len(starts) > most || len(starts) < 10 {
		t.Errorf("%d starts in %v under ratePerMinute 1200, want at most %d (one per 50 ms, and 10 for the delay of deliveries) and more than a few",
			len(starts), span, most)
	}
	t.Logf("%d starts in %v under ratePerMinute 1200 (20 a second)", len(starts), span)
}
