// Command funcjob runs a Go function every minute, durably: the job lives
// in a SQLite file, so stop the program and start it again and it carries
// on where it left off, running once for the minutes it missed while it
// was down (the default misfire policy) and then on its schedule.
//
//	go run ./examples/funcjob -db funcjob.db
//
// It is the shortest path through the package: ScheduleFunc (a closure, the
// default collection, no registry and no JSON), Start and Stop. A job whose
// function takes data, a payload of its own, is a typed handler instead
// (action.Handle and Schedule; see the package documentation).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/recurrence"
	"github.com/jobclock/scheduler/store/sqlite"
)

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
	s, err := scheduler.New(st, nil)
	if err == nil {
		_, err = s.ScheduleFunc(ctx, "minutely", recurrence.Every(1, recurrence.Minute), func(ctx context.Context) error {
			_, err := fmt.Fprintf(out, "report for ops at %s\n", time.Now().UTC().Format("15:04"))
			return err
		})
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
