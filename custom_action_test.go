package scheduler_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/store/memory"
)

// TestHostActionType: a host registers its own action type in
// Config.Executors; the Scheduler accepts jobs of that type, hands the
// executor the job's custom payload, and rejects types nobody registered.
func TestHostActionType(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		got := make(chan json.RawMessage, 1)
		reg := &action.Registry{}
		reg.Register("Kafka", action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			got <- req.Action.Custom
			return &action.Result{Message: "produced"}, nil
		}))
		s, err := scheduler.New(memory.New(), &scheduler.Config{Executors: reg, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutCollection(ctx, "c", nil, nil); err != nil {
			t.Fatal(err)
		}
		def, err := scheduler.ParseJob([]byte(`{"action": {"type": "Kafka", "custom": {"topic": "audit"}}}`),
			&scheduler.ParseOptions{ActionTypes: []action.Type{"Kafka"}})
		if err != nil {
			t.Fatalf("ParseJob of a host type: %v", err)
		}
		if _, err := s.PutJob(ctx, "c", "produce", def, nil); err != nil {
			t.Fatalf("PutJob of a registered host type: %v", err)
		}

		other := *def
		other.Action.Type = "Nope"
		_, err = s.PutJob(ctx, "c", "nope", &other, nil)
		var ve *scheduler.ValidationError
		if !errors.As(err, &ve) || ve.Path != "action.type" {
			t.Errorf("PutJob of an unregistered type = %v, want a ValidationError at action.type", err)
		}
		// A type registered after New is accepted as well.
		reg.Register("Nope", action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			return &action.Result{}, nil
		}))
		if _, err := s.PutJob(ctx, "c", "nope", &other, nil); err != nil {
			t.Errorf("PutJob of a type registered after New: %v", err)
		}
		if _, err := s.PatchJob(ctx, "c", "produce", []byte(`{"action": {"custom": {"topic": "audit"}}}`), nil); err != nil {
			t.Errorf("PatchJob of a job with a host type: %v", err)
		}

		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		select {
		case payload := <-got:
			if string(payload) != `{"topic":"audit"}` {
				t.Errorf("executor got custom payload %s, want {\"topic\":\"audit\"}", payload)
			}
		default:
			t.Fatal("the host executor was never called")
		}
		r, err := s.GetJob(ctx, "c", "produce")
		if err != nil {
			t.Fatal(err)
		}
		if r.State != scheduler.JobCompleted {
			t.Errorf("job state = %s, want Completed", r.State)
		}
		if err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
	})
}
