package scheduler_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/internal/fill"
)

func TestJobClone(t *testing.T) {
	var j, want scheduler.Job
	fill.Fill(&j, 1)
	fill.Fill(&want, 1)
	c := j.Clone()
	if diff := cmp.Diff(&want, c); diff != "" {
		t.Fatalf("Clone() differs from the original (-want +got):\n%s", diff)
	}
	fill.Mutate(c)
	if diff := cmp.Diff(&want, &j); diff != "" {
		t.Errorf("changing the clone changed the original (-want +got):\n%s", diff)
	}
	if (*scheduler.Job)(nil).Clone() != nil {
		t.Errorf("Clone of nil is not nil")
	}
}
