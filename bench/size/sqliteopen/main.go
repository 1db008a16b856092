// Command sqliteopen opens the SQLite store and nothing else, for the size
// benchmark.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/jobclock/scheduler/store/sqlite"
)

func main() {
	st, err := sqlite.Open(context.Background(), os.Args[0]+".db", nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	st.Close()
}
