// Command started starts and stops a Scheduler over the memory store: the
// engine and the built-in HTTP executor, for the size benchmark.
package main

import (
	"context"
	"fmt"
	"os"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/store/memory"
)

func main() {
	ctx := context.Background()
	s, err := scheduler.New(memory.New(), nil)
	if err == nil {
		err = s.Start(ctx)
	}
	if err == nil {
		err = s.Stop(ctx)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
