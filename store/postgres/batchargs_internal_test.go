package postgres

import (
	"fmt"
	"testing"

	scheduler "github.com/jobclock/scheduler"
)

// TestBatchArgsFreeBounded: batch arguments that checked a batch of
// thousands of jobs for repeats are not kept for the next batch (their
// map stays as large as it grew), as those whose columns grew are not.
func TestBatchArgsFreeBounded(t *testing.T) {
	batch := make([]scheduler.RecordRequest, 5000)
	for i := range batch {
		batch[i].Job = &scheduler.JobRecord{Collection: "c", Name: fmt.Sprint(i)}
	}
	a := newBatchArgs()
	if a.repeatsJob(batch) {
		t.Fatal("repeatsJob = true for distinct jobs")
	}
	a.free()
	for range 4 {
		b := newBatchArgs()
		defer b.free()
		if b == a {
			t.Fatal("the batch arguments of 5000 jobs were kept for the next batch")
		}
	}
}
