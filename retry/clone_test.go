package retry_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jobclock/scheduler/internal/fill"
	"github.com/jobclock/scheduler/retry"
)

func TestPolicyClone(t *testing.T) {
	var p, want retry.Policy
	fill.Fill(&p, 1)
	fill.Fill(&want, 1)
	c := p.Clone()
	if diff := cmp.Diff(&want, c); diff != "" {
		t.Fatalf("Clone() differs from the original (-want +got):\n%s", diff)
	}
	fill.Mutate(c)
	if diff := cmp.Diff(&want, &p); diff != "" {
		t.Errorf("changing the clone changed the original (-want +got):\n%s", diff)
	}
	if (*retry.Policy)(nil).Clone() != nil {
		t.Errorf("Clone of nil is not nil")
	}
}
