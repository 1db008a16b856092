package scheduler

import (
	"strings"
	"testing"
	"time"
)

// TestLimitWaitRounding: the history entry of an attempt that waited for
// a limit gives the wait in limitWaitMs and in its message rounded the
// same way, to the nearest millisecond.
func TestLimitWaitRounding(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		wait time.Duration
		ms   int32
		text string
	}{
		{100*time.Millisecond + 600*time.Microsecond, 101, "waited 101ms for the collection's host limit"},
		{100*time.Millisecond + 400*time.Microsecond, 100, "waited 100ms for the collection's host limit"},
		{1999*time.Millisecond + 500*time.Microsecond, 2000, "waited 2s for the collection's host limit"},
	} {
		o := &Occurrence{Number: 1, Expected: t0, At: t0.Add(tc.wait), Limited: &LimitWait{Since: t0, Key: "host"}}
		h := attemptEntry(&JobRecord{Collection: "c", Name: "j"}, o, outcome{start: o.At, end: o.At})
		if msg := limitWaited(o); h.LimitWaitMillis != tc.ms || !strings.HasPrefix(msg, tc.text) {
			t.Errorf("wait %v: limitWaitMs %d, message %q; want %d, %q", tc.wait, h.LimitWaitMillis, msg, tc.ms, tc.text)
		}
	}
}
