package scheduler_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/store/memory"
)

// A Scheduler over the memory store runs a job that calls a local HTTP
// endpoint once, now; OnHistory sees the attempt.
func ExampleScheduler() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Println("received", r.Method, r.URL.Path, "for job", r.Header.Get("x-ms-scheduler-jobid"))
	}))
	defer srv.Close()

	ctx := context.Background()
	done := make(chan scheduler.HistoryEntry, 1)
	s, err := scheduler.New(memory.New(), &scheduler.Config{
		Logger:    slog.New(slog.DiscardHandler),
		OnHistory: func(h scheduler.HistoryEntry) { done <- h },
	})
	if err != nil {
		panic(err)
	}
	if _, err := s.PutCollection(ctx, "reports", &scheduler.JobCollection{}, nil); err != nil {
		panic(err)
	}
	job, err := scheduler.ParseJob([]byte(`{
		// no startTime and no recurrence: run once, now
		"action": {"type": "Http", "request": {"uri": "`+srv.URL+`/nightly", "method": "POST"}},
	}`), nil)
	if err != nil {
		panic(err)
	}
	if _, err := s.PutJob(ctx, "reports", "nightly", job, nil); err != nil {
		panic(err)
	}
	if err := s.Start(ctx); err != nil {
		panic(err)
	}
	h := <-done
	fmt.Println(h.ActionName, h.Status, "occurrence", h.RepeatCount)
	r, err := s.GetJob(ctx, "reports", "nightly")
	if err != nil {
		panic(err)
	}
	fmt.Println(r.State, "after", r.Status.ExecutionCount, "execution")

	stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := s.Stop(stopCtx); err != nil {
		panic(err)
	}
	// Output:
	// received POST /nightly for job reports/nightly
	// MainAction Completed occurrence 1
	// Completed after 1 execution
}

// JobCounts and DueCount give the figures of a dashboard or a metrics
// scrape in one store call each. Before Start, the job due now is the
// backlog.
func ExampleScheduler_JobCounts() {
	ctx := context.Background()
	s, err := scheduler.New(memory.New(), &scheduler.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	if _, err := s.PutCollection(ctx, "reports", &scheduler.JobCollection{}, nil); err != nil {
		panic(err)
	}
	for name, def := range map[string]string{
		"now":      `{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}}}`,
		"tomorrow": `{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}}, "startTime": "` + time.Now().Add(24*time.Hour).Format(time.RFC3339) + `"}`,
		"paused":   `{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}}, "state": "Disabled"}`,
	} {
		job, err := scheduler.ParseJob([]byte(def), nil)
		if err != nil {
			panic(err)
		}
		if _, err := s.PutJob(ctx, "reports", name, job, nil); err != nil {
			panic(err)
		}
	}
	counts, err := s.JobCounts(ctx)
	if err != nil {
		panic(err)
	}
	for _, c := range counts {
		fmt.Println(c.Collection, c.State, c.Jobs)
	}
	due, err := s.DueCount(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println("due now:", due)
	// Output:
	// reports Disabled 1
	// reports Enabled 2
	// due now: 1
}

// ListJobs lists a collection's jobs in the order of their next runs,
// the jobs without one (here a paused job) last; Descending is the exact
// reverse.
func ExampleScheduler_ListJobs_orderBy() {
	ctx := context.Background()
	s, err := scheduler.New(memory.New(), &scheduler.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	if _, err := s.PutCollection(ctx, "reports", &scheduler.JobCollection{}, nil); err != nil {
		panic(err)
	}
	in := func(d time.Duration) string { return time.Now().Add(d).UTC().Format(time.RFC3339) }
	for name, def := range map[string]string{
		"weekly":  `{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}}, "startTime": "` + in(7*24*time.Hour) + `"}`,
		"nightly": `{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}}, "startTime": "` + in(24*time.Hour) + `"}`,
		"paused":  `{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}}, "state": "Disabled"}`,
	} {
		job, err := scheduler.ParseJob([]byte(def), nil)
		if err != nil {
			panic(err)
		}
		if _, err := s.PutJob(ctx, "reports", name, job, nil); err != nil {
			panic(err)
		}
	}
	for _, desc := range []bool{false, true} {
		jobs, err := s.ListJobs(ctx, "reports", &scheduler.ListJobsOptions{OrderBy: scheduler.JobsByNextExecution, Descending: desc})
		if err != nil {
			panic(err)
		}
		var names []string
		for _, j := range jobs {
			names = append(names, j.Name)
		}
		fmt.Println(names)
	}
	// Output:
	// [nightly weekly paused]
	// [paused weekly nightly]
}

// With HistoryPerJob set to NoHistory the Scheduler keeps no history, as a
// cron library keeps none, and the job's state and counters are kept as
// ever.
func ExampleNoHistory() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Println("received", r.Method, r.URL.Path)
	}))
	defer srv.Close()

	ctx := context.Background()
	s, err := scheduler.New(memory.New(), &scheduler.Config{Logger: slog.New(slog.DiscardHandler), HistoryPerJob: scheduler.NoHistory})
	if err != nil {
		panic(err)
	}
	if _, err := s.PutCollection(ctx, "reports", &scheduler.JobCollection{}, nil); err != nil {
		panic(err)
	}
	job, err := scheduler.ParseJob([]byte(`{"action": {"type": "Http", "request": {"uri": "`+srv.URL+`/nightly", "method": "POST"}}}`), nil)
	if err != nil {
		panic(err)
	}
	if _, err := s.PutJob(ctx, "reports", "nightly", job, nil); err != nil {
		panic(err)
	}
	if err := s.Start(ctx); err != nil {
		panic(err)
	}
	for {
		r, err := s.GetJob(ctx, "reports", "nightly")
		if err != nil {
			panic(err)
		}
		if r.State == scheduler.JobCompleted {
			fmt.Println(r.State, "after", r.Status.ExecutionCount, "execution")
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	hist, err := s.ListHistory(ctx, "reports", "nightly", nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(len(hist), "history entries")
	stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := s.Stop(stopCtx); err != nil {
		panic(err)
	}
	// Output:
	// received POST /nightly
	// Completed after 1 execution
	// 0 history entries
}

// FiringWindow trades start lateness for CPU at a steady rate: the jobs
// claimed ahead that are due within 5ms of the earliest one start
// together, none early and none more than 5ms late. A window longer than
// ClaimAhead is refused, with an error that names the field.
func ExampleConfig_firingWindow() {
	s, err := scheduler.New(memory.New(), &scheduler.Config{FiringWindow: 5 * time.Millisecond})
	if err != nil {
		panic(err)
	}
	_ = s // Start, put jobs, Stop as in the Scheduler example
	_, err = scheduler.New(memory.New(), &scheduler.Config{ClaimAhead: 10 * time.Millisecond, FiringWindow: 20 * time.Millisecond})
	fmt.Println(err)
	// Output:
	// scheduler: Config.FiringWindow is 20ms, longer than ClaimAhead (10ms)
}
