// Command newonly makes a Scheduler over the memory store and nothing
// else; TestNewOnlyLinksNoParser builds it.
package main

import (
	"fmt"
	"os"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/store/memory"
)

func main() {
	if _, err := scheduler.New(memory.New(), nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
