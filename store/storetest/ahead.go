package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
)

// RunClaimAhead runs one Scheduler per store in stores (instances over one
// shared database), each claiming jobs ahead of their due instants (the
// Config.ClaimAhead of DefaultClaimAhead), over one-time jobs due 4 ms apart, and stops
// the first instance while it holds claims. It checks that each job ran
// exactly once, none before its due instant, none as late as the stopped
// instance's leases would have made it (Stop gives its held claims back),
// and that every job ended Completed with one history entry and no lease.
func RunClaimAhead(t *testing.T, stores []scheduler.Store) {
	t.Helper()
	ctx := context.Background()
	const jobs = 300
	const every = 4 * time.Millisecond
	const lease = 30 * time.Second // longer than a write may wait for SQLite's lock
	type start struct {
		instance string
		at, due  time.Time
	}
	var mu sync.Mutex
	runs := make(map[string][]start)
	in := newInstances(t, stores, "ahead", jobs, scheduler.Config{LeaseDuration: lease, ClaimAhead: scheduler.DefaultClaimAhead}, func(id string, req *action.Request) {
		at := time.Now()
		mu.Lock()
		runs[req.JobID()] = append(runs[req.JobID()], start{id, at, req.ExpectedTime})
		mu.Unlock()
	})
	scheds := in.scheds
	first := time.Now().Add(2 * time.Second)
	puts := make([]scheduler.JobPut, jobs)
	for i := range puts {
		at := first.Add(time.Duration(i) * every)
		puts[i] = scheduler.JobPut{Name: fmt.Sprintf("j%03d", i), Job: &scheduler.Job{
			StartTime: &at,
			Action:    action.Action{Type: action.HTTP, Request: &action.HTTPRequest{URI: "http://127.0.0.1:1/", Method: "GET"}},
		}}
	}
	if _, err := scheds[0].PutJobs(ctx, "ahead", puts, nil); err != nil {
		t.Fatal(err)
	}
	for _, s := range scheds {
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// The first instance stops while jobs are due, holding claims.
	time.Sleep(time.Until(first.Add(jobs * every / 3)))
	held := 0
	for i := range jobs {
		if j, err := stores[0].GetJob(ctx, "ahead", fmt.Sprintf("j%03d", i)); err == nil && j.LeaseOwner == "instance-0" {
			held++
		}
	}
	t.Logf("the first instance holds %d jobs as it stops", held)
	in.stop(scheds[0])
	in.wait(2 * lease)
	in.stop(scheds[1:]...)
	mu.Lock()
	defer mu.Unlock()
	if len(runs) != jobs {
		t.Errorf("%d jobs ran, want %d", len(runs), jobs)
	}
	var latest time.Duration
	for id, who := range runs {
		if len(who) != 1 {
			t.Errorf("job %s ran %d times: %v", id, len(who), who)
		}
		for _, r := range who {
			if r.at.Before(r.due) {
				t.Errorf("job %s started %v before its due instant, on %s", id, r.due.Sub(r.at), r.instance)
			}
			latest = max(latest, r.at.Sub(r.due))
		}
	}
	// A claim that Stop did not give back would wait for its lease.
	if latest >= lease/2 {
		t.Errorf("a job started %v late (the first instance held %d jobs shortly before it stopped); want well under the lease (%v)", latest, held, lease)
	}
	for i := range jobs {
		name := fmt.Sprintf("j%03d", i)
		j, err := stores[len(stores)-1].GetJob(ctx, "ahead", name)
		if err != nil {
			t.Fatal(err)
		}
		h, err := stores[len(stores)-1].ListHistory(ctx, "ahead", name, scheduler.HistoryFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if j.State != scheduler.JobCompleted || len(h) != 1 || j.LeaseOwner != "" {
			t.Errorf("%s: state %s, %d history entries, lease %q; want Completed, 1 entry, no lease", name, j.State, len(h), j.LeaseOwner)
		}
	}
}
