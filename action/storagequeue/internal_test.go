package storagequeue

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/sas"

	"github.com/jobclock/scheduler/action"
)

func randSuffix() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

const devKey = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

func azuriteEndpoint(t *testing.T) string {
	ep := os.Getenv("JOBCLOCK_AZURITE_QUEUE_ENDPOINT")
	if ep == "" {
		const msg = `JOBCLOCK_AZURITE_QUEUE_ENDPOINT is not set; start Azurite with: eval "$(scripts/start-azurite.sh)"`
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return ep
}

// The executor refuses oversized messages itself, so the service's 413 is
// produced here with the SDK directly and fed to describe.
func TestDescribeRequestBodyTooLarge(t *testing.T) {
	ep := azuriteEndpoint(t)
	cred, err := azqueue.NewSharedKeyCredential("devstoreaccount1", devKey)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := azqueue.NewServiceClientWithSharedKeyCredential(ep, cred, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	name := "jc-big-" + randSuffix()
	if _, err := svc.CreateQueue(ctx, name, nil); err != nil {
		t.Fatal(err)
	}
	defer svc.DeleteQueue(ctx, name, nil)
	_, err = svc.NewQueueClient(name).EnqueueMessage(ctx, strings.Repeat("a", MaxMessageSize+1), nil)
	if err == nil {
		t.Fatal("the queue service accepted 64 KiB + 1 bytes")
	}
	u, _ := url.Parse(ep)
	e := New(&Options{Endpoint: PathStyle(u.Scheme + "://" + u.Host)})
	derr := e.describe(err, &action.StorageQueueMessage{StorageAccount: "devstoreaccount1", QueueName: name}, time.Millisecond)
	if !action.IsPermanent(derr) {
		t.Errorf("describe(413) = %v, not permanent; the message is as large at every retry", derr)
	}
	got := derr.Error()
	for _, w := range []string{"too large", "RequestBodyTooLarge", "64 KiB", u.Host} {
		if !strings.Contains(got, w) {
			t.Errorf("describe(413) = %q, want it to contain %q", got, w)
		}
	}
}

func TestClientCache(t *testing.T) {
	ep := azuriteEndpoint(t)
	u, _ := url.Parse(ep)
	cred, _ := azqueue.NewSharedKeyCredential("devstoreaccount1", devKey)
	svc, _ := azqueue.NewServiceClientWithSharedKeyCredential(ep, cred, nil)
	ctx := context.Background()
	var queues []string
	for i := range 3 {
		name := "jc-cache-" + string(rune('a'+i)) + "-" + randSuffix()
		if _, err := svc.CreateQueue(ctx, name, nil); err != nil {
			t.Fatal(err)
		}
		defer svc.DeleteQueue(ctx, name, nil)
		queues = append(queues, name)
	}
	sign := func(q string) string {
		qp, err := sas.QueueSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, ExpiryTime: time.Now().Add(time.Hour).UTC(),
			Permissions: (&sas.QueuePermissions{Add: true}).String(), QueueName: q}.SignWithSharedKey(cred)
		if err != nil {
			t.Fatal(err)
		}
		return qp.Encode()
	}
	e := New(&Options{Endpoint: PathStyle(u.Scheme + "://" + u.Host), MaxClients: 2})
	defer e.Close()
	send := func(q string) {
		t.Helper()
		req := &action.Request{Action: &action.Action{Type: action.StorageQueue, QueueMessage: &action.StorageQueueMessage{
			StorageAccount: "devstoreaccount1", QueueName: q, SASToken: sign(q), Message: "m"}}}
		if _, err := e.Execute(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	tok := sign(queues[0])
	for range 3 {
		req := &action.Request{Action: &action.Action{Type: action.StorageQueue, QueueMessage: &action.StorageQueueMessage{
			StorageAccount: "devstoreaccount1", QueueName: queues[0], SASToken: tok, Message: "m"}}}
		if _, err := e.Execute(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	if n := e.cachedClients(); n != 1 {
		t.Errorf("after 3 sends to one queue with one token: %d cached clients, want 1", n)
	}
	send(queues[1])
	send(queues[2])
	if n := e.cachedClients(); n != 2 {
		t.Errorf("after sends to 3 queues with MaxClients 2: %d cached clients, want 2", n)
	}
	if _, oldest := e.clients.Get(clientKey{"devstoreaccount1", queues[0], tok}); oldest {
		t.Error("the least recently used client was kept")
	}
}
