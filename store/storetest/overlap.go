package storetest

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/recurrence"
)

// RunOverlap runs one Scheduler per store in stores (instances over one
// shared database, or a single store) for about seven seconds, with jobs
// every second whose first attempt lasts 2.5 s, one per overlap policy,
// and checks across the instances that no two attempts of a job run at
// once (CancelRunning's cancelled one ends first), that no occurrence
// runs twice, and what each policy does with the occurrences that came
// due meanwhile: Skip and CancelRunning run none of them late, BufferAll
// runs each in order, Postpone runs one of them. A job under AllowAll,
// every attempt of which lasts 2.5 s, runs each of its six occurrences
// once, on time (within 750 ms), three side by side.
func RunOverlap(t *testing.T, stores []scheduler.Store) {
	t.Helper()
	ctx := context.Background()
	var mu sync.Mutex
	runs := make(map[string][]overlapRun)
	scheds := make([]*scheduler.Scheduler, len(stores))
	for i, st := range stores {
		reg := &action.Registry{}
		reg.Register(action.HTTP, action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			mu.Lock()
			first := len(runs[req.JobID()]) == 0 || req.JobID() == "overlap/AllowAll"
			runs[req.JobID()] = append(runs[req.JobID()], overlapRun{expected: req.ExpectedTime, start: time.Now()})
			n := len(runs[req.JobID()]) - 1
			mu.Unlock()
			var err error
			if first {
				select {
				case <-time.After(2500 * time.Millisecond):
				case <-ctx.Done():
					err = ctx.Err()
				}
			}
			mu.Lock()
			runs[req.JobID()][n].end = time.Now()
			mu.Unlock()
			if err != nil {
				return &action.Result{Message: "cancelled"}, err
			}
			return &action.Result{Message: "ok"}, nil
		}))
		s, err := scheduler.New(st, &scheduler.Config{InstanceID: fmt.Sprintf("instance-%d", i), Executors: reg,
			PollInterval: 20 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		scheds[i] = s
	}
	coll := &scheduler.JobCollection{Properties: scheduler.CollectionProperties{SKU: &scheduler.SKU{Name: scheduler.SKUP20Premium},
		Quota: &scheduler.Quota{MaxRecurrence: &scheduler.MaxRecurrence{Frequency: recurrence.Second, Interval: 1}}}}
	if _, err := scheds[0].PutCollection(ctx, "overlap", coll, nil); err != nil {
		t.Fatal(err)
	}
	start := time.Now().UTC().Truncate(time.Second).Add(2 * time.Second)
	policies := []string{"Postpone", "Skip", "BufferAll", "CancelRunning", "AllowAll"}
	for i, p := range policies {
		def := `{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:1/", "method": "GET"}, "retryPolicy": {"retryType": "None"}},
			"startTime": "` + start.Format(time.RFC3339) + `", "recurrence": {"frequency": "Second", "count": 6}, "runPolicy": {"overlap": "` + p + `"}}`
		job, err := scheds[0].ParseJob([]byte(def))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := scheds[i%len(scheds)].PutJob(ctx, "overlap", p, job, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range scheds {
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(time.Until(start) + 9*time.Second)
	for _, s := range scheds {
		if err := s.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range policies[:len(policies)-1] {
		got := runs["overlap/"+p]
		var expected []time.Time
		for i, r := range got {
			expected = append(expected, r.expected)
			if i > 0 && r.start.Before(got[i-1].end) {
				t.Errorf("%s: attempt %d started at %v, before attempt %d ended at %v", p, i, r.start, i-1, got[i-1].end)
			}
		}
		if !slices.IsSortedFunc(expected, time.Time.Compare) || len(slices.CompactFunc(slices.Clone(expected), time.Time.Equal)) != len(expected) {
			t.Errorf("%s ran for %v; want each occurrence once, in order", p, expected)
			continue
		}
		if len(expected) == 0 || !expected[0].Equal(start) {
			t.Errorf("%s ran for %v; want the first at %v", p, expected, start)
			continue
		}
		// The first attempt runs from start to start+2.5s (CancelRunning:
		// to start+1s); start+1s and start+2s come due meanwhile.
		late := func(at time.Time) bool { return at.After(start) && at.Before(start.Add(2500*time.Millisecond)) }
		var lateRuns int
		for _, e := range expected {
			if late(e) {
				lateRuns++
			}
		}
		want := map[string]int{"Postpone": 1, "Skip": 0, "BufferAll": 2, "CancelRunning": 2}[p]
		if lateRuns != want {
			t.Errorf("%s ran %d of the occurrences due during the first attempt (%v), want %d", p, lateRuns, expected, want)
		}
	}
	allowAll(t, start, runs["overlap/AllowAll"])
	// Each outcome is on record, the last ones' too (recorded after the
	// job Completed).
	h, err := stores[0].ListHistory(ctx, "overlap", "AllowAll", scheduler.HistoryFilter{Status: scheduler.StatusCompleted})
	if r, gerr := stores[0].GetJob(ctx, "overlap", "AllowAll"); err != nil || gerr != nil || len(h) != 6 || r.State != scheduler.JobCompleted {
		t.Errorf("AllowAll: %d Completed history entries (%v), job %v (%v); want 6, Completed", len(h), err, r, gerr)
	}
}

// overlapRun is an attempt that RunOverlap's executor saw.
type overlapRun struct {
	expected   time.Time
	start, end time.Time
}

// allowAll checks the attempts of RunOverlap's job under AllowAll: one for
// each of the six occurrences from start, on time, three at once.
func allowAll(t *testing.T, start time.Time, got []overlapRun) {
	t.Helper()
	var expected []time.Time
	for _, r := range got {
		expected = append(expected, r.expected)
	}
	slices.SortFunc(expected, time.Time.Compare)
	var want []time.Time
	for i := range 6 {
		want = append(want, start.Add(time.Duration(i)*time.Second))
	}
	if !slices.EqualFunc(want, expected, time.Time.Equal) {
		t.Errorf("AllowAll ran for %v; want each of %v once", expected, want)
	}
	most := 0
	for _, r := range got {
		if late := r.start.Sub(r.expected); late > 750*time.Millisecond {
			t.Errorf("AllowAll ran the occurrence expected at %v %v late", r.expected, late)
		}
		at := 0
		for _, o := range got {
			if !o.start.After(r.start) && (o.end.IsZero() || o.end.After(r.start)) {
				at++
			}
		}
		most = max(most, at)
	}
	// At least 3: each lasts 2.5 s and one starts every second. More when
	// an attempt's 2.5 s sleep ends late on a loaded machine (a fourth
	// starts on time meanwhile): that is the machine's, not the engine's.
	if most < 3 {
		t.Errorf("AllowAll ran at most %d attempts at once, want at least 3 (each lasts 2.5 s, one starts every second)", most)
	}
}

// RunAllowAllTakeover checks, over two instances sharing a database
// (stores[0] and stores[1]), that an attempt of a job under overlap
// AllowAll whose instance stopped without waiting for it runs again on the
// other instance once its claim expired (ActionTimeout plus LeaseDuration
// after it started: 2 s here), with the same execution tag, while the
// job's next occurrences run on time; and that the outcome the stopped
// instance's attempt reports afterwards is not recorded.
func RunAllowAllTakeover(t *testing.T, stores []scheduler.Store) {
	t.Helper()
	ctx := context.Background()
	type attempt struct {
		instance string
		occ      int
		tag      string
		at       time.Time
	}
	var mu sync.Mutex
	var attempts []attempt
	started, release := make(chan struct{}), make(chan struct{})
	newScheduler := func(st scheduler.Store, instance string) *scheduler.Scheduler {
		reg := &action.Registry{}
		reg.Register(action.HTTP, action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			mu.Lock()
			attempts = append(attempts, attempt{instance, req.Occurrence, req.ExecutionTag(), time.Now()})
			mu.Unlock()
			if instance == "a" && req.Occurrence == 1 {
				close(started)
				<-release // ignores its context, as a hung process would
			}
			return &action.Result{Message: "ran on " + instance}, nil
		}))
		s, err := scheduler.New(st, &scheduler.Config{InstanceID: instance, Executors: reg, ActionTimeout: time.Second,
			LeaseDuration: time.Second, PollInterval: 20 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b := newScheduler(stores[0], "a"), newScheduler(stores[1], "b")
	coll := &scheduler.JobCollection{Properties: scheduler.CollectionProperties{SKU: &scheduler.SKU{Name: scheduler.SKUP20Premium},
		Quota: &scheduler.Quota{MaxRecurrence: &scheduler.MaxRecurrence{Frequency: recurrence.Second, Interval: 1}}}}
	if _, err := a.PutCollection(ctx, "takeover", coll, nil); err != nil {
		t.Fatal(err)
	}
	if err := a.Start(ctx); err != nil {
		t.Fatal(err)
	}
	start := time.Now().UTC().Truncate(time.Second).Add(time.Second)
	job, err := a.ParseJob([]byte(`{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:1/", "method": "GET"}, "retryPolicy": {"retryType": "None"}},
		"startTime": "` + start.Format(time.RFC3339) + `", "recurrence": {"frequency": "Second", "count": 3}, "runPolicy": {"overlap": "AllowAll"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.PutJob(ctx, "takeover", "j", job, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("occurrence 1 did not start on instance a")
	}
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if err := a.Stop(gone); err == nil {
		t.Error("a.Stop returned nil with its attempt running, want the context's error")
	}
	if err := b.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer b.Stop(ctx)
	// b runs occurrence 1 again from start+2s, and records it.
	entry := func() []scheduler.HistoryEntry {
		h, err := b.ListHistory(ctx, "takeover", "j", nil)
		if err != nil {
			t.Fatal(err)
		}
		var ones []scheduler.HistoryEntry
		for _, e := range h {
			if e.RepeatCount == 1 {
				ones = append(ones, e)
			}
		}
		return ones
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(entry()) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	close(release) // a's attempt reports, long after its claim expired
	time.Sleep(time.Second)
	mu.Lock()
	defer mu.Unlock()
	var a1, b1 []attempt
	others := 0
	for _, at := range attempts {
		switch {
		case at.occ != 1:
			others++
			if at.instance != "b" {
				t.Errorf("occurrence %d ran on %s, want b (a stopped)", at.occ, at.instance)
			}
		case at.instance == "a":
			a1 = append(a1, at)
		default:
			b1 = append(b1, at)
		}
	}
	if len(a1) != 1 || len(b1) != 1 || a1[0].tag != b1[0].tag {
		t.Fatalf("occurrence 1 ran on a %v and on b %v; want once on each, with one execution tag", a1, b1)
	}
	// The claim counts from a's claim of the job, a little before its
	// attempt started.
	if late := b1[0].at.Sub(a1[0].at); late < 1500*time.Millisecond || late > 3*time.Second {
		t.Errorf("b ran occurrence 1 %v after a did, want about its claim's 2 s", late)
	}
	if others != 2 {
		t.Errorf("occurrences 2 and 3 ran %d times, want 2", others)
	}
	if ones := entry(); len(ones) != 1 || ones[0].Message != "ran on b" {
		t.Errorf("history of occurrence 1: %+v; want one entry, of b's attempt", ones)
	}
}
