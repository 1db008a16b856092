// Command funcjob runs a Go function every minute, durably: the job lives
// in a SQLite file, so stop the program and start it again and it carries
// on where it left off, running once for the minutes it missed while it
// was down (the default misfire policy) and then on its schedule.
//
//	go run ./examples/funcjob -db funcjob.db
//
// It is the shortest path through the package: a typed handler, Schedule
// (the default collection, no JSON), Start and Stop.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"sync"
	"syscall"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/recurrence"
	"github.com/jobclock/scheduler/store/sqlite"
)

// Report is the payload of the job: what the function is called with.
type Report struct {
	To string `json:"to"`
}

func main() {
	db := flag.String("db", "funcjob.db", "the SQLite file that keeps the job")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *db, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// run runs the scheduler until ctx ends.
func run(ctx context.Context, db string, out io.Writer) error {
	s, st, err := start(ctx, db, out)
	if err != nil {
		return err
	}
	defer st.Close()
	<-ctx.Done()
	return s.Stop(context.Background()) // waits for an attempt in flight
}

// start opens the store, schedules the job and starts the scheduler.
func start(ctx context.Context, db string, out io.Writer) (*scheduler.Scheduler, *sqlite.Store, error) {
	st, err := sqlite.Open(ctx, db, nil)
	if err != nil {
		return nil, nil, err
	}
	var mu sync.Mutex
	reg := new(action.Registry)
	report := action.Handle(reg, "Report", func(ctx context.Context, req *action.Request, r Report) error {
		mu.Lock()
		defer mu.Unlock()
		_, err := fmt.Fprintf(out, "report %d for %s, due %s\n", req.Occurrence, r.To, req.ExpectedTime.UTC().Format("15:04"))
		return err
	})
	s, err := scheduler.New(st, &scheduler.Config{Executors: reg})
	if err == nil {
		_, err = s.Schedule(ctx, "minutely", recurrence.Every(1, recurrence.Minute), report.Action(Report{To: "ops"}))
	}
	if err == nil {
		err = s.Start(ctx)
	}
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return s, st, nil
}
