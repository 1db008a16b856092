package scheduler

import (
	"testing"
	"time"
)

// TestSettleHeldOffRunClaim: during a takeover grace, an AllowAll run
// whose claim has expired since the instance lost the store is looked at
// again when the grace ends; one whose claim lasts past the grace, when
// the claim ends, not at the grace's end, when it could not be taken
// over yet.
func TestSettleHeldOffRunClaim(t *testing.T) {
	now := base
	held := heldOff{since: now.Add(-time.Minute), until: now.Add(30 * time.Second)}
	tests := []struct {
		name  string
		until time.Time // of the run's claim
		want  time.Time // DueAt
	}{
		{"expired during the outage", now.Add(-10 * time.Second), held.until},
		{"ends during the grace", now.Add(10 * time.Second), held.until},
		{"ends after the grace", now.Add(2 * time.Minute), now.Add(2 * time.Minute)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &JobRecord{Job: minuteJob(0), State: JobEnabled}
			r.Schedule.Policy = &PolicyState{Running: []Run{{Occurrence: Occurrence{Number: 1, Expected: base, Tag: "t"}, Owner: "other", Until: tt.until}}}
			m := machine{policy: RunPolicy{Missed: MissedRunOnce, Overlap: OverlapAllowAll}, threshold: time.Minute, held: held}
			m.settle(r, now)
			if !r.Schedule.DueAt.Equal(tt.want) {
				t.Errorf("settle at %v with the grace until %v: DueAt = %v, want %v", now, held.until, r.Schedule.DueAt, tt.want)
			}
		})
	}
}
