package http_test

import (
	"strings"
	"testing"
	"testing/synctest"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	httpaction "github.com/jobclock/scheduler/action/http"
	"github.com/jobclock/scheduler/schedulertest"
)

// TestDefinitionErrorNotRetried: an attempt that fails on the action's own
// definition (a pfx that is not PKCS#12) is not retried, whatever the
// retry policy says: the occurrence faults at its first attempt. The job
// reaches the executor unchecked, as one stored before its checks were
// made at put time does.
func TestDefinitionErrorNotRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ex := httpaction.New(nil)
		defer ex.Close()
		rec := schedulertest.NewRecorder(ex.Execute) // not an action.Validator
		reg := new(action.Registry)
		reg.Register(action.HTTPS, rec)
		s := schedulertest.New(t, &scheduler.Config{Executors: reg})
		job := `{"action": {"type": "Https", "request": {"uri": "https://target.test/work", "method": "GET",
			"authentication": {"type": "ClientCertificate", "pfx": "bm90IGEgcGZ4", "password": "pw"}},
			"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT1M", "retryCount": 2}}}`
		if _, err := s.PutJobJSON(t.Context(), scheduler.DefaultCollection, "j", []byte(job), nil); err != nil {
			t.Fatal(err)
		}
		s.WaitState(scheduler.DefaultCollection, "j", scheduler.JobFaulted)
		if n := len(rec.Attempts()); n != 1 {
			t.Errorf("%d attempts, want 1", n)
		}
		h := s.History(scheduler.DefaultCollection, "j")
		if len(h) == 0 || !strings.Contains(h[0].Message, "action.request.authentication.pfx: is not a usable PKCS#12 file") {
			t.Errorf("history %+v: want the first entry to name the pfx", h)
		}
	})
}
