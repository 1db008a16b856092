package scheduler_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	scheduler "github.com/jobclock/scheduler"
)

// TestPutResumeTimeMessages: a put of a paused job checks its resumeTime
// against the clock: one in the past is "not in the future", one more
// than 18 months on is "more than 18 months" (synctest's clock reads
// 2000-01-01).
func TestPutResumeTimeMessages(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{})
		for _, tt := range []struct{ resume, want string }{
			{"1999-12-31T00:00:00Z", `resumeTime: "1999-12-31T00:00:00Z" is not in the future`},
			{"2020-01-01T00:00:00Z", `resumeTime: "2020-01-01T00:00:00Z" is more than 18 months (548 days) from now`},
		} {
			job := mustParse(t, jobJSON(time.Time{}, `"state": "Disabled", "resumeTime": "`+tt.resume+`"`))
			_, err := e.s.PutJob(context.Background(), "c", "j", job, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("PutJob with resumeTime %s: %v, want %q", tt.resume, err, tt.want)
			}
		}
	})
}
