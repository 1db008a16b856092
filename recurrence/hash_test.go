package recurrence_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jobclock/scheduler/recurrence"
)

// TestCronHashPinned pins the minute that "H * * * *" gives a few jobs,
// and the values of the other H forms for one: a change of the hash or of
// what it hashes moves every job that uses H, on every instance at once,
// and must show here. The values were computed once, apart from the
// product (FNV-1a of collection, 0, job, 0 and the field's name, mixed by
// fmix64, modulo the number of values).
func TestCronHashPinned(t *testing.T) {
	tests := []struct {
		spec, collection, job string
		want                  string // the expanded schedule, as fmt prints it
	}{
		{"H * * * *", "reports", "nightly", "minutes [18]"},
		{"H * * * *", "reports", "hourly", "minutes [42]"},
		{"H * * * *", "billing", "nightly", "minutes [55]"},
		{"H * * * *", "", "", "minutes [9]"},
		{"H H * * *", "reports", "nightly", "minutes [18] hours [19]"},
		{"H(0-29) H(9-17) * * *", "reports", "nightly", "minutes [18] hours [13]"},
		{"H/15 * * * *", "reports", "nightly", "minutes [3 18 33 48]"},
		{"H(0-29)/10 * * * *", "reports", "nightly", "minutes [8 18 28]"},
		{"0 0 H * *", "reports", "nightly", "minutes [0] hours [0] monthDays [17]"},
		{"0 0 * * H", "reports", "nightly", "minutes [0] hours [0] weekDays [Saturday]"},
		{"H 0 0 * * *", "reports", "nightly", "seconds [31] minutes [0] hours [0]"},
	}
	for _, tt := range tests {
		x, err := (&recurrence.Recurrence{Cron: tt.spec}).ExpandCronJob(tt.collection, tt.job)
		if err != nil {
			t.Errorf("ExpandCronJob(%q, %q/%q): %v", tt.spec, tt.collection, tt.job, err)
			continue
		}
		if got := scheduleText(x.Schedule); got != tt.want {
			t.Errorf("%q for %s/%s: %s, want %s", tt.spec, tt.collection, tt.job, got, tt.want)
		}
	}
}

// scheduleText prints the members H can decide that s has.
func scheduleText(s *recurrence.Schedule) string {
	var out string
	add := func(name string, v any, n int) {
		if n > 0 {
			if out != "" {
				out += " "
			}
			out += fmt.Sprintf("%s %v", name, v)
		}
	}
	add("seconds", s.Seconds, len(s.Seconds))
	add("minutes", s.Minutes, len(s.Minutes))
	add("hours", s.Hours, len(s.Hours))
	add("monthDays", s.MonthDays, len(s.MonthDays))
	add("weekDays", s.WeekDays, len(s.WeekDays))
	return out
}

// TestCronHashWithoutJob: ParseCron and ExpandCron know no job, so they
// leave out what H decides, and say so in words; a member given next to H
// is the job's to fill, not compared.
func TestCronHashWithoutJob(t *testing.T) {
	r, err := recurrence.ParseCron("H 9 * * 1-5")
	if err != nil {
		t.Fatal(err)
	}
	if r.Frequency != recurrence.Week || len(r.Schedule.Minutes) != 0 || !cmp.Equal(r.Schedule.Hours, []int{9}) {
		t.Errorf("ParseCron(H 9 * * 1-5) = %+v %+v, want Week, hours [9] and no minutes", r, r.Schedule)
	}
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	if got, want := r.Describe(start), `as the cron spec "H 9 * * 1-5" says, with the minute that its H fields give each job by its collection and name`; got != want {
		t.Errorf("Describe = %q, want %q", got, want)
	}
	given := &recurrence.Recurrence{Cron: "H 9 * * 1-5", Schedule: &recurrence.Schedule{Minutes: []int{7}}}
	x, err := given.ExpandCronJob("reports", "nightly")
	if err != nil {
		t.Fatalf("ExpandCronJob with minutes given: %v", err)
	}
	if !cmp.Equal(x.Schedule.Minutes, []int{18}) {
		t.Errorf("minutes = %v, want the job's [18] in place of the [7] given", x.Schedule.Minutes)
	}
	if got, want := x.Describe(start), "every week on Monday to Friday at 09:18 (UTC), by H for this job: minute 18"; got != want {
		t.Errorf("Describe = %q, want %q", got, want)
	}
	// The rule runs at the job's minute.
	rule, err := recurrence.CompileJob(&recurrence.Recurrence{Cron: "H 9 * * 1-5"}, start, "reports", "nightly")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rule.Next(start), time.Date(2026, 1, 5, 9, 18, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("Next = %v, want %v", got, want)
	}
}

func TestCronHashErrors(t *testing.T) {
	for _, tt := range []struct{ spec, want string }{
		{"H(30-10) * * * *", `cron: field 1 (minutes): H(30-10) runs backwards (its start is after its end)`},
		{"H(0-60) * * * *", `cron: field 1 (minutes): 60 is out of range 0-59`},
		{"H(5) * * * *", `cron: field 1 (minutes): "H(5)": H takes a range in parentheses, such as H(0-29)`},
		{"H5 * * * *", `cron: field 1 (minutes): "H5" is not H, H(lo-hi), H/step or H(lo-hi)/step`},
		{"H/0 * * * *", `cron: field 1 (minutes): the step in "H/0" must be at least 1`},
		{"0 H(0-24) * * *", `cron: field 2 (hours): 24 is out of range 0-23`},
	} {
		_, err := recurrence.ParseCron(tt.spec)
		var ce *recurrence.CronError
		if !errors.As(err, &ce) {
			t.Errorf("ParseCron(%q) = %v, want a *CronError", tt.spec, err)
			continue
		}
		if err.Error() != tt.want {
			t.Errorf("ParseCron(%q) = %q, want %q", tt.spec, err, tt.want)
		}
	}
}
