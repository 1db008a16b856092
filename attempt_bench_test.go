package scheduler_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/store/memory"
)

// benchReport is the payload of the jobs BenchmarkAttempt runs.
type benchReport struct {
	To     string   `json:"to"`
	Format string   `json:"format"`
	Copies int      `json:"copies"`
	Teams  []string `json:"teams"`
}

// BenchmarkAttempt measures one attempt through the engine on the memory
// store (claim, execute, record the outcome and its history entry) with
// three executors that do nothing with the payload beyond getting it as a
// Go value: a typed action.Handler (handler-ns/attempt), an
// action.ExecutorFunc that decodes the payload itself with encoding/json,
// as a host writes without Handler (func-ns/attempt), and one that ignores
// it (noop-ns/attempt), for the cost of decoding. Each iteration runs a
// batch of one-time jobs with the same payload, due at once, for each
// executor in turn (the order rotating), timed from Start until every
// outcome is recorded; handler/func is the ratio the target is
// about.
func BenchmarkAttempt(b *testing.B) {
	payload, _ := json.Marshal(benchReport{To: "ops@example.com", Format: "pdf", Copies: 2, Teams: []string{"finance", "sales"}})
	const batch = 2000
	kinds := []string{"noop", "func", "handler"}
	total := make(map[string]time.Duration)
	round := 0
	for b.Loop() {
		for i := range kinds {
			kind := kinds[(i+round)%len(kinds)]
			total[kind] += attemptBatch(b, kind, payload, batch)
		}
		round++
	}
	for _, k := range kinds {
		b.ReportMetric(float64(total[k].Nanoseconds())/float64(round*batch), k+"-ns/attempt")
	}
	b.ReportMetric(float64(total["handler"])/float64(total["func"]), "handler/func")
	b.ReportMetric(float64(total["handler"])/float64(total["noop"]), "handler/noop")
}

// attemptBatch runs n one-time jobs with an executor of the given kind and
// returns the time from Start until their outcomes are recorded.
func attemptBatch(b *testing.B, kind string, payload []byte, n int) time.Duration {
	ctx := context.Background()
	reg := new(action.Registry)
	switch kind {
	case "noop":
		reg.Register("Report", action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			return nil, nil
		}))
	case "func":
		reg.Register("Report", action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			var r benchReport
			if err := json.Unmarshal(req.Action.Custom, &r); err != nil {
				return nil, err
			}
			return nil, nil
		}))
	case "handler":
		action.Handle(reg, "Report", func(ctx context.Context, req *action.Request, r benchReport) error {
			return nil
		})
	}
	var recorded atomic.Int64
	done := make(chan struct{})
	s, err := scheduler.New(memory.New(), &scheduler.Config{Executors: reg, Logger: slog.New(slog.DiscardHandler),
		OnHistory: func(scheduler.HistoryEntry) {
			if recorded.Add(1) == int64(n) {
				close(done)
			}
		}})
	if err != nil {
		b.Fatal(err)
	}
	col := &scheduler.JobCollection{Properties: scheduler.CollectionProperties{Quota: &scheduler.Quota{MaxJobCount: n}}}
	if _, err := s.PutCollection(ctx, "c", col, nil); err != nil {
		b.Fatal(err)
	}
	for i := range n {
		job := &scheduler.Job{Action: action.Action{Type: "Report", Custom: payload}}
		if _, err := s.PutJob(ctx, "c", fmt.Sprintf("j%d", i), job, nil); err != nil {
			b.Fatal(err)
		}
	}
	start := time.Now()
	if err := s.Start(ctx); err != nil {
		b.Fatal(err)
	}
	<-done
	elapsed := time.Since(start)
	if err := s.Stop(ctx); err != nil {
		b.Fatal(err)
	}
	return elapsed
}
