// Command funcjob runs a Go function as a job on the SQLite store, by the
// shortest path: a typed handler, Schedule (the default collection, no
// JSON), Start and Stop. The size benchmark builds it.
package main

import (
	"context"
	"log"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/recurrence"
	"github.com/jobclock/scheduler/store/sqlite"
)

type Report struct {
	To string `json:"to"`
}

func main() {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, "funcjob.db", nil)
	if err != nil {
		log.Fatal(err)
	}
	reg := new(action.Registry)
	report := action.Handle(reg, "Report", func(ctx context.Context, req *action.Request, r Report) error {
		log.Printf("report for %s, due %s", r.To, req.ExpectedTime)
		return nil
	})
	s, err := scheduler.New(st, &scheduler.Config{Executors: reg})
	if err == nil {
		_, err = s.Schedule(ctx, "nightly", recurrence.Daily(2, 30).In("Europe/Berlin"), report.Action(Report{To: "ops"}))
	}
	if err != nil {
		log.Fatal(err)
	}
	s.Start(ctx)
	defer s.Stop(context.Background())
}
