// Command funcjob runs a Go function as a job on the SQLite store: a
// registry with the function's action type, a collection, PutJob, Start
// and Stop. The size benchmark builds it.
package main

import (
	"context"
	"fmt"
	"os"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/recurrence"
	"github.com/jobclock/scheduler/store/sqlite"
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	st, err := sqlite.Open(ctx, "funcjob.db", nil)
	if err != nil {
		return err
	}
	defer st.Close()
	reg := new(action.Registry)
	reg.Register("Report", action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
		fmt.Println("report", req.ExecutionTag)
		return &action.Result{Message: "done"}, nil
	}))
	s, err := scheduler.New(st, &scheduler.Config{Executors: reg})
	if err != nil {
		return err
	}
	if _, err := s.PutCollection(ctx, "reports", nil, nil); err != nil {
		return err
	}
	job := &scheduler.Job{
		Action:     action.Action{Type: "Report", Custom: []byte(`{}`)},
		Recurrence: &recurrence.Recurrence{Frequency: recurrence.Minute, Interval: 1},
	}
	if _, err := s.PutJob(ctx, "reports", "minutely", job, nil); err != nil {
		return err
	}
	if err := s.Start(ctx); err != nil {
		return err
	}
	return s.Stop(ctx)
}
