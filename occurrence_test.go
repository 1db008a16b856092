package scheduler_test

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
)

// TestOccurrenceOutlivesItsWorker checks that an occurrence which goes on
// after its attempt (a retry is due later) is the job's own: the worker
// that ran the attempt runs another job's occurrence meanwhile, and the
// first job's stored occurrence must not change.
func TestOccurrenceOutlivesItsWorker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{MaxConcurrency: 1}) // one worker runs both
		e.exec.fn = func(req *action.Request, _ int) error {
			if req.JobID() == "c/a" {
				return errors.New("boom")
			}
			return nil
		}
		e.start()
		defer e.stop()
		retry := `"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT1H", "retryCount": 3}`
		e.put("a", `{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/a", "method": "GET"}, `+retry+`}}`)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		e.put("b", jobJSON(time.Time{}, `"recurrence": {"frequency": "Minute", "interval": 1, "count": 4}`))
		time.Sleep(5 * time.Minute)
		synctest.Wait()

		reqs := e.exec.requests()
		var tagA string
		nB := 0
		for _, q := range reqs {
			switch q.JobID() {
			case "c/a":
				tagA = q.ExecutionTag()
			case "c/b":
				nB++
			}
		}
		if tagA == "" || nB != 4 {
			t.Fatalf("attempts: %d of b, a's tag %q; want 4 and a's first attempt", nB, tagA)
		}
		c := e.job("a").Schedule.Current
		if c == nil {
			t.Fatal("job a has no current occurrence; want its first, waiting for a retry")
		}
		want := scheduler.Occurrence{Number: 1, Expected: e.t0.UTC(), Tag: tagA, At: e.t0.Add(time.Hour).UTC(), Retry: 1}
		if c.Number != want.Number || !c.Expected.Equal(want.Expected) || c.Tag != want.Tag || !c.At.Equal(want.At) || c.Retry != want.Retry || c.ErrorAction {
			t.Errorf("job a's current occurrence = %+v; want %+v", *c, want)
		}
	})
}
