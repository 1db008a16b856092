package action_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/internal/fill"
)

func TestActionClone(t *testing.T) {
	var a, want action.Action
	fill.Fill(&a, 1)
	fill.Fill(&want, 1)
	c := a.Clone()
	if diff := cmp.Diff(&want, c); diff != "" {
		t.Fatalf("Clone() differs from the original (-want +got):\n%s", diff)
	}
	fill.Mutate(c)
	if diff := cmp.Diff(&want, &a); diff != "" {
		t.Errorf("changing the clone changed the original (-want +got):\n%s", diff)
	}
	if (*action.Action)(nil).Clone() != nil {
		t.Errorf("Clone of nil is not nil")
	}
}
