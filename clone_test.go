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

func TestJobRecordClone(t *testing.T) {
	checkDeepClone(t, 2, (*scheduler.JobRecord).Clone)
}

func TestCollectionRecordClone(t *testing.T) {
	checkDeepClone(t, 3, (*scheduler.CollectionRecord).Clone)
}

// checkDeepClone checks that clone returns a copy of a value with every
// member set that equals it, and that changing every member of the copy
// leaves the value as it was.
func checkDeepClone[T any](t *testing.T, seed int, clone func(*T) *T) {
	t.Helper()
	var v, want T
	fill.Fill(&v, seed)
	fill.Fill(&want, seed)
	c := clone(&v)
	if diff := cmp.Diff(&want, c); diff != "" {
		t.Fatalf("Clone() differs from the original (-want +got):\n%s", diff)
	}
	fill.Mutate(c)
	if diff := cmp.Diff(&want, &v); diff != "" {
		t.Errorf("changing the clone changed the original (-want +got):\n%s", diff)
	}
}
