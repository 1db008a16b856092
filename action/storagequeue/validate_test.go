package storagequeue_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/action/storagequeue"
	"github.com/jobclock/scheduler/jobdef"
)

// TestNamesCheckedWhenPut: a job whose queueMessage names a storage
// account or a queue that Azure refuses is refused when it is parsed with
// the executor registered, at the paths of the names in the definition,
// for the action and for the error action; a job with good names is not.
func TestNamesCheckedWhenPut(t *testing.T) {
	reg := new(action.Registry)
	defer reg.Close(t.Context())
	storagequeue.Register(reg, nil)
	queueAction := func(account, queue string) string {
		return `{"type": "StorageQueue", "retryPolicy": {"retryType": "None"}, "queueMessage": {"storageAccount": "` +
			account + `", "queueName": "` + queue + `", "sasToken": "sv=2020-01-01&sig=abc", "message": "hi"}}`
	}
	for _, tt := range []struct {
		name string
		job  string
		want []string // paths
	}{
		{"good names", `{"action": ` + queueAction("myaccount", "my-queue") + `}`, nil},
		{"bad names", `{"action": ` + queueAction("Bad Account!", "UPPER_case") + `}`,
			[]string{"action.queueMessage.queueName", "action.queueMessage.storageAccount"}},
		{"bad queue of the error action", `{"action": {"type": "StorageQueue", "queueMessage": {"storageAccount": "myaccount",
			"queueName": "my-queue", "sasToken": "sv=2020-01-01&sig=abc", "message": "hi"}, "errorAction": ` + queueAction("myaccount", "a--b") + `}}`,
			[]string{"action.errorAction.queueMessage.queueName"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := jobdef.ParseJob([]byte(tt.job), &jobdef.ParseOptions{Executors: reg})
			var got []string
			for _, ve := range jobdef.ValidationErrors(err) {
				got = append(got, ve.Path)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseJob(%s) problems at (-want +got):\n%s\nerror: %v", tt.name, diff, err)
			}
		})
	}
}
