package recurrence_test

import (
	"testing"
	"unsafe"

	"github.com/jobclock/scheduler/recurrence"
)

// TestRecurrenceSize keeps a Recurrence in the 80-byte size class that
// every recurring job's definition holds one of: a member more puts it in
// the 96-byte class (16 bytes more per job). Interval and Count are
// int32 to leave room for Window.
func TestRecurrenceSize(t *testing.T) {
	if n := unsafe.Sizeof(recurrence.Recurrence{}); n > 80 {
		t.Errorf("Recurrence is %d bytes, want at most 80", n)
	}
}
