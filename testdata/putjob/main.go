// Command putjob makes a Scheduler over the memory store and puts a job
// given as JSON: the control of TestNewOnlyLinksNoParser.
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
		_, err = s.PutJobJSON(context.Background(), "c", "j", []byte(`{}`), nil)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
