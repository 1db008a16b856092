// Command azure is the program "started" with the Azure executors
// registered (action/azure), for the size benchmark.
package main

import (
	"context"
	"fmt"
	"os"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/action/azure"
	"github.com/jobclock/scheduler/store/memory"
)

func main() {
	ctx := context.Background()
	reg := new(action.Registry)
	azure.Register(reg, nil)
	defer reg.Close(ctx)
	s, err := scheduler.New(memory.New(), &scheduler.Config{Executors: reg})
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
