package recurrence_test

import (
	"testing"
	"time"

	"github.com/jobclock/scheduler/recurrence"
)

// TestDescribeCronBuilder checks that a recurrence made by Cron, whose
// spec is not expanded yet, is described as the spec's expansion is,
// with the fields given beside the spec (time zone, count, end).
func TestDescribeCronBuilder(t *testing.T) {
	start := time.Date(2027, 1, 4, 0, 0, 0, 0, time.UTC)
	end := time.Date(2027, 6, 30, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		rec  *recurrence.Recurrence
		want string
	}{
		{"weekdays at nine", recurrence.Cron("0 9 * * 1-5"),
			"every week on Monday to Friday at 09:00 (UTC)"},
		{"in a zone, with a count", func() *recurrence.Recurrence {
			r := recurrence.Cron("30 2 * * *").In("Europe/Berlin")
			r.Count = 3
			return r
		}(), "every day at 02:30 (Europe/Berlin; 02:30 runs at 03:30 when clocks go forward; 02:30 runs once when clocks go back), 3 times"},
		{"a zone prefix and an end", func() *recurrence.Recurrence {
			r := recurrence.Cron("CRON_TZ=America/New_York */15 * * * *")
			r.EndTime = &end
			return r
		}(), "every 15 minutes (America/New_York), until 29 Jun 2027 20:00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.rec.Describe(start)
			x, err := tt.rec.ExpandCron()
			if err != nil {
				t.Fatal(err)
			}
			if want := x.Describe(start); got != want {
				t.Errorf("Describe = %q; the expanded spec's is %q", got, want)
			}
			if got != tt.want {
				t.Errorf("Describe = %q, want %q", got, tt.want)
			}
		})
	}
}
