package sqlite_test

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/jobclock/scheduler/store/sqlite"
)

// TestConcurrentOpenNewFile: Stores opened at once on a new file (as
// several processes started together open it) all open, instead of some
// failing with "database is locked" while another switches the file to
// WAL mode.
func TestConcurrentOpenNewFile(t *testing.T) {
	const rounds, openers = 100, 8
	dir := t.TempDir()
	for round := range rounds {
		path := filepath.Join(dir, fmt.Sprintf("jobclock%d.db", round))
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make([]error, openers)
		for i := range errs {
			wg.Go(func() {
				<-start
				s, err := sqlite.Open(ctx, path, nil)
				if err != nil {
					errs[i] = err
					return
				}
				errs[i] = s.Close()
			})
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d: Open %d of a new file that %d open at once = %v, want nil", round, i, openers, err)
			}
		}
	}
}
