package recurrence_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jobclock/scheduler/internal/fill"
	"github.com/jobclock/scheduler/recurrence"
)

func TestRecurrenceClone(t *testing.T) {
	var r, want recurrence.Recurrence
	fill.Fill(&r, 1)
	fill.Fill(&want, 1)
	c := r.Clone()
	if diff := cmp.Diff(&want, c); diff != "" {
		t.Fatalf("Clone() differs from the original (-want +got):\n%s", diff)
	}
	fill.Mutate(c)
	if diff := cmp.Diff(&want, &r); diff != "" {
		t.Errorf("changing the clone changed the original (-want +got):\n%s", diff)
	}
	if (*recurrence.Recurrence)(nil).Clone() != nil || (*recurrence.Schedule)(nil).Clone() != nil {
		t.Errorf("Clone of nil is not nil")
	}
}
