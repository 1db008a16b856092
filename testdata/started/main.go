// Command started makes a Scheduler over the memory store, starts it and
// stops it: the control of TestNewOnlyLinksNoHTTPClient (Stop closes the
// built-in HTTP executor, which makes its transport).
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
		err = s.Start(context.Background())
	}
	if err == nil {
		err = s.Stop(context.Background())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
