package storagequeue_test

import (
	"strings"
	"testing"
	"testing/synctest"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/action/storagequeue"
	"github.com/jobclock/scheduler/schedulertest"
)

// TestDefinitionErrorNotRetried: an attempt that fails on the action's own
// definition (a SAS token that expired: the bubble's clock reads 2000) is not retried, whatever the
// retry policy says: the occurrence faults at its first attempt.
func TestDefinitionErrorNotRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ex := storagequeue.New(nil)
		defer ex.Close()
		rec := schedulertest.NewRecorder(ex.Execute)
		reg := new(action.Registry)
		reg.Register(action.StorageQueue, rec)
		s := schedulertest.New(t, &scheduler.Config{Executors: reg})
		job := `{"action": {"type": "StorageQueue", "queueMessage": {"storageAccount": "myaccount", "queueName": "orders",
			"sasToken": "?sv=2019-02-02&se=1999-12-31T00%3A00%3A00Z&sp=a&sig=abc", "message": "hi"},
			"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT1M", "retryCount": 2}}}`
		if _, err := s.PutJobJSON(t.Context(), scheduler.DefaultCollection, "j", []byte(job), nil); err != nil {
			t.Fatal(err)
		}
		s.WaitState(scheduler.DefaultCollection, "j", scheduler.JobFaulted)
		if n := len(rec.Attempts()); n != 1 {
			t.Errorf("%d attempts, want 1", n)
		}
		h := s.History(scheduler.DefaultCollection, "j")
		if len(h) == 0 || !strings.Contains(h[0].Message, "action.queueMessage.sasToken: expired at 1999-12-31T00:00:00Z (se)") {
			t.Errorf("history %+v: want the first entry to name the SAS token", h)
		}
	})
}
