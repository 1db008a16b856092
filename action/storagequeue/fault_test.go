//go:build unix

package storagequeue_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/sas"

	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/action/storagequeue"
	"github.com/jobclock/scheduler/internal/testproc"
)

// TestQueueServiceGoesAwayMidSend runs an Azurite of its own and takes it
// away while a message is on its way: frozen, then killed, as a crashed
// host would be. The attempt fails with a message naming the service,
// well within the executor's timeout; once Azurite is back on the same
// port, the next attempt (with the executor's cached client) succeeds.
func TestQueueServiceGoesAwayMidSend(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Azurite")
	}
	proc, endpoint := testproc.Azurite(t)
	u, _ := url.Parse(endpoint)
	cred, err := azqueue.NewSharedKeyCredential("devstoreaccount1", devKey)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const queue = "jc-fault"
	createQueue := func() *azqueue.ServiceClient {
		t.Helper()
		svc, err := azqueue.NewServiceClientWithSharedKeyCredential(endpoint, cred, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.CreateQueue(ctx, queue, nil); err != nil {
			t.Fatalf("create queue: %v", err)
		}
		return svc
	}
	createQueue()
	qp, err := sas.QueueSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, ExpiryTime: time.Now().Add(time.Hour).UTC(),
		Permissions: (&sas.QueuePermissions{Add: true}).String(), QueueName: queue}.SignWithSharedKey(cred)
	if err != nil {
		t.Fatal(err)
	}
	const timeout = 20 * time.Second
	e := storagequeue.New(&storagequeue.Options{Endpoint: storagequeue.PathStyle(u.Scheme + "://" + u.Host), Timeout: timeout})
	defer e.Close()
	send := func(text string) (*action.Result, error) {
		return e.Execute(ctx, &action.Request{Action: &action.Action{Type: action.StorageQueue, QueueMessage: &action.StorageQueueMessage{
			StorageAccount: "devstoreaccount1", QueueName: queue, SASToken: qp.Encode(), Message: text}}})
	}
	if _, err := send("before"); err != nil {
		t.Fatalf("send before the fault: %v", err)
	}

	var res *action.Result
	took, err := proc.KillDuringCall(2*timeout, func() (err error) {
		res, err = send("in flight")
		return err
	})
	if err == nil {
		t.Fatal("send to a service killed mid-send succeeded")
	}
	t.Logf("after %v: %v", took, err)
	if !strings.Contains(err.Error(), u.Host) || !strings.Contains(err.Error(), "unreachable") ||
		!strings.Contains(res.Message, "StorageQueue Action - ") {
		t.Errorf("error = %q, message %q; want the service %s named as unreachable", err, res.Message, u.Host)
	}
	if took >= timeout {
		t.Errorf("the failed send took %v, the whole timeout; want it to fail as soon as the service is gone", took)
	}

	proc.Restart() // in memory: the queue is gone with the old process
	svc := createQueue()
	res, err = send("after")
	if err != nil {
		t.Fatalf("send after the service came back: %v", err)
	}
	if !strings.Contains(res.Message, "Message queued") {
		t.Errorf("message = %q", res.Message)
	}
	n := int32(32)
	got, err := svc.NewQueueClient(queue).DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{NumberOfMessages: &n})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Messages) != 1 || *got.Messages[0].MessageText != "after" {
		t.Errorf("queue after the restart holds %d messages, want the one sent after it", len(got.Messages))
	}
}
