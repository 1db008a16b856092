// Command putjob makes a Scheduler over the memory store and puts a job:
// the control of TestNewOnlyLinksNoParser.
package main

import (
	"context"
	"fmt"
	"os"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/store/memory"
)

func main() {
	s, err := scheduler.New(memory.New(), nil)
	if err == nil {
		_, err = s.PutJob(context.Background(), "c", "j", nil, nil)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
