package storetest

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/secrets"
)

// RunSchedulers runs one Scheduler per store in stores (instances over one
// shared database, or a single store) with a counting executor, gives them
// one-time jobs that are due at once, and checks that each job ran exactly
// once, left exactly one history entry, and ended Completed.
func RunSchedulers(t *testing.T, stores []scheduler.Store) {
	t.Helper()
	ctx := context.Background()
	const jobs = 150
	var mu sync.Mutex
	runs := make(map[string][]string) // job -> instances
	in := newInstances(t, stores, "shared", jobs, scheduler.Config{PollInterval: 20 * time.Millisecond}, func(id string, req *action.Request) {
		mu.Lock()
		runs[req.JobID()] = append(runs[req.JobID()], id)
		mu.Unlock()
	})
	scheds := in.scheds
	for _, s := range scheds {
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for i := range jobs {
		def := &scheduler.Job{Action: action.Action{Type: action.HTTP, Request: &action.HTTPRequest{URI: "http://127.0.0.1:1/", Method: "GET"}}}
		if _, err := scheds[i%len(scheds)].PutJob(ctx, "shared", fmt.Sprintf("j%03d", i), def, nil); err != nil {
			t.Fatal(err)
		}
	}
	in.wait(30 * time.Second)
	in.stop(scheds...)
	mu.Lock()
	defer mu.Unlock()
	if len(runs) != jobs {
		t.Errorf("%d jobs ran, want %d", len(runs), jobs)
	}
	for id, who := range runs {
		if len(who) != 1 {
			t.Errorf("job %s ran %d times: %v", id, len(who), who)
		}
	}
	for i := range jobs {
		name := fmt.Sprintf("j%03d", i)
		j, err := stores[0].GetJob(ctx, "shared", name)
		if err != nil {
			t.Fatal(err)
		}
		h, err := stores[len(stores)-1].ListHistory(ctx, "shared", name, scheduler.HistoryFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if j.State != scheduler.JobCompleted || len(h) != 1 || h[0].Status != scheduler.StatusCompleted || j.LeaseOwner != "" {
			t.Errorf("%s: state %s, %d history entries, lease %q; want Completed, 1 Completed entry, no lease", name, j.State, len(h), j.LeaseOwner)
		}
	}
}

// instances are Schedulers over stores (one each) that share a
// collection and count the history entries they store.
type instances struct {
	t      *testing.T
	scheds []*scheduler.Scheduler // named instance-0, instance-1, ...
	want   int                    // history entries to wait for
	mu     sync.Mutex
	stored int // history entries so far
	done   chan struct{}
}

// newInstances returns a Scheduler over each of stores, made with cfg
// (its InstanceID, Executors, Logger and OnHistory set here), whose Http
// executor calls run with the instance's name, and puts collection coll
// (premium, so that it may hold many jobs); wait waits for want history
// entries.
func newInstances(t *testing.T, stores []scheduler.Store, coll string, want int, cfg scheduler.Config, run func(instance string, req *action.Request)) *instances {
	t.Helper()
	in := &instances{t: t, want: want, done: make(chan struct{})}
	for i, st := range stores {
		id := fmt.Sprintf("instance-%d", i)
		reg := &action.Registry{}
		reg.Register(action.HTTP, action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			run(id, req)
			return &action.Result{Message: "ok"}, nil
		}))
		c := cfg
		c.InstanceID, c.Executors, c.Logger = id, reg, slog.New(slog.DiscardHandler)
		c.OnHistory = func(scheduler.HistoryEntry) {
			in.mu.Lock()
			defer in.mu.Unlock()
			if in.stored++; in.stored == want {
				close(in.done)
			}
		}
		s, err := scheduler.New(st, &c)
		if err != nil {
			t.Fatal(err)
		}
		in.scheds = append(in.scheds, s)
	}
	def := &scheduler.JobCollection{}
	def.Properties.SKU = &scheduler.SKU{Name: scheduler.SKUP20Premium}
	if _, err := in.scheds[0].PutCollection(context.Background(), coll, def, nil); err != nil {
		t.Fatal(err)
	}
	return in
}

// wait waits until the instances stored the history entries wanted, for
// at most d, and fails the test when they did not.
func (in *instances) wait(d time.Duration) {
	in.t.Helper()
	select {
	case <-in.done:
	case <-time.After(d):
		in.mu.Lock()
		in.t.Errorf("%d of %d history entries within %v", in.stored, in.want, d)
		in.mu.Unlock()
	}
}

// stop stops scheds, and fails the test when one does not stop.
func (in *instances) stop(scheds ...*scheduler.Scheduler) {
	in.t.Helper()
	for _, s := range scheds {
		if err := s.Stop(context.Background()); err != nil {
			in.t.Errorf("Stop: %v", err)
		}
	}
}

// testSchedulerRecordsAreTheCallers checks, over a Scheduler on the store,
// that the records its methods return are the caller's: changing every
// member of one (a definition that uses most of the job object, a
// collection with every member set) changes nothing the store holds.
func testSchedulerRecordsAreTheCallers(t *testing.T, st scheduler.Store) {
	key, _, err := secrets.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	keys, err := secrets.NewKeyring(key)
	if err != nil {
		t.Fatal(err)
	}
	reg := &action.Registry{}
	ok := action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
		return &action.Result{Message: "ok"}, nil
	})
	reg.Register(action.HTTPS, ok)
	reg.Register(action.StorageQueue, ok)
	ran := make(chan scheduler.HistoryEntry, 10)
	s, err := scheduler.New(st, &scheduler.Config{Executors: reg, Secrets: keys, PollInterval: 20 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler), OnHistory: func(h scheduler.HistoryEntry) { ran <- h }})
	if err != nil {
		t.Fatal(err)
	}
	stored := func() (any, error) { return takeSnapshot(t, st), nil }
	check := func(call string, got any, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", call, err)
		}
		checkOwned(t, call, got, stored)
	}

	def := richCollection("c").Definition
	c, err := s.PutCollection(ctx, "c", &def, nil)
	check("PutCollection", c, err)
	c, err = s.PatchCollection(ctx, "c", []byte(`{"location": "south"}`), nil)
	check("PatchCollection", c, err)
	c, err = s.DisableCollection(ctx, "c")
	check("DisableCollection", c, err)
	c, err = s.EnableCollection(ctx, "c")
	check("EnableCollection", c, err)
	c, err = s.GetCollection(ctx, "c")
	check("GetCollection", c, err)
	cs, err := s.ListCollections(ctx)
	check("ListCollections", &cs, err)

	// richJob, starting tomorrow: it runs only when RunJob asks.
	jd := richJob()
	start, end := time.Now().Add(24*time.Hour), time.Now().Add(60*24*time.Hour)
	jd.StartTime, jd.Recurrence.EndTime = &start, &end
	j, err := s.PutJob(ctx, "c", "j", jd, nil)
	check("PutJob", j, err)
	j, err = s.PatchJob(ctx, "c", "j", []byte(`{"action": {"request": {"body": "patched"}}}`), nil)
	check("PatchJob", j, err)
	j, err = s.DisableJob(ctx, "c", "j")
	check("DisableJob", j, err)
	j, err = s.EnableJob(ctx, "c", "j")
	check("EnableJob", j, err)
	j, err = s.GetJob(ctx, "c", "j")
	check("GetJob", j, err)
	js, err := s.ListJobs(ctx, "c", nil)
	check("ListJobs", &js, err)
	j, err = s.RunJob(ctx, "c", "j")
	check("RunJob", j, err)
	j, err = s.Schedule(ctx, "once", nil, richJob().Action)
	check("Schedule", j, err)

	// Run the two jobs that are due (the run of c/j and the one-time
	// default/once) so that there is history to read.
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer s.Stop(ctx)
	for range 2 {
		select {
		case <-ran:
		case <-time.After(30 * time.Second):
			t.Fatal("the due jobs did not run within 30s")
		}
	}
	h, err := s.ListHistory(ctx, "c", "j", nil)
	check("ListHistory", &h, err)
	h, err = s.RecentHistory(ctx, nil)
	check("RecentHistory", &h, err)
	if len(h) != 2 {
		t.Errorf("RecentHistory returned %d entries, want 2", len(h))
	}
}
