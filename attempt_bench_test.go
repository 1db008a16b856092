package scheduler_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"

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
// store (claim, execute, record the outcome and its history entry): b.N
// one-time jobs with the same payload, due at once, timed from Start until
// every outcome is recorded. The executors do nothing with the payload
// beyond getting it as a Go value: Handler is a typed action.Handler,
// ExecutorFunc an action.ExecutorFunc that decodes the payload itself with
// encoding/json (what a host writes without Handler), and ExecutorFuncNoop
// one that ignores it, for the cost of decoding.
func BenchmarkAttempt(b *testing.B) {
	payload, _ := json.Marshal(benchReport{To: "ops@example.com", Format: "pdf", Copies: 2, Teams: []string{"finance", "sales"}})
	for _, kind := range []string{"ExecutorFuncNoop", "ExecutorFunc", "Handler"} {
		b.Run(kind, func(b *testing.B) {
			ctx := context.Background()
			reg := new(action.Registry)
			switch kind {
			case "ExecutorFuncNoop":
				reg.Register("Report", action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
					return nil, nil
				}))
			case "ExecutorFunc":
				reg.Register("Report", action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
					var r benchReport
					if err := json.Unmarshal(req.Action.Custom, &r); err != nil {
						return nil, err
					}
					return nil, nil
				}))
			case "Handler":
				action.Handle(reg, "Report", func(ctx context.Context, req *action.Request, r benchReport) error {
					return nil
				})
			}
			var recorded atomic.Int64
			done := make(chan struct{})
			n := int64(b.N)
			s, err := scheduler.New(memory.New(), &scheduler.Config{Executors: reg, Logger: slog.New(slog.DiscardHandler),
				OnHistory: func(scheduler.HistoryEntry) {
					if recorded.Add(1) == n {
						close(done)
					}
				}})
			if err != nil {
				b.Fatal(err)
			}
			col := &scheduler.JobCollection{Properties: scheduler.CollectionProperties{Quota: &scheduler.Quota{MaxJobCount: b.N}}}
			if _, err := s.PutCollection(ctx, "c", col, nil); err != nil {
				b.Fatal(err)
			}
			for i := range b.N {
				job := &scheduler.Job{Action: action.Action{Type: "Report", Custom: payload}}
				if _, err := s.PutJob(ctx, "c", fmt.Sprintf("j%d", i), job, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			if err := s.Start(ctx); err != nil {
				b.Fatal(err)
			}
			<-done
			b.StopTimer()
			if err := s.Stop(ctx); err != nil {
				b.Fatal(err)
			}
		})
	}
}
