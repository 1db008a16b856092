// Command telemetry makes a Scheduler over the memory store, opted in to
// package telemetry (OpenTelemetry's API, no SDK): what the opt-in costs a
// program, for the size benchmark.
package main

import (
	"fmt"
	"os"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/store/memory"
	"github.com/jobclock/scheduler/telemetry"
)

func main() {
	if _, err := scheduler.New(memory.New(), &scheduler.Config{Observer: telemetry.New(nil)}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
