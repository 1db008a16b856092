package storagequeue_test

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
)

// devKey is the well-known key of Azurite's devstoreaccount1 (public, not a
// secret).
const devKey = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

// peer is the Azurite queue service the tests run against.
type peer struct {
	base    string // "http://127.0.0.1:PORT/"
	account string // "devstoreaccount1"
	svc     *azqueue.ServiceClient
	cred    *azqueue.SharedKeyCredential
}

// azurite returns the Azurite instance named by JOBCLOCK_AZURITE_QUEUE_ENDPOINT
// (set by scripts/start-azurite.sh). Without it the test is skipped, or
// fails when CI=true.
func azurite(tb testing.TB) *peer {
	tb.Helper()
	ep := os.Getenv("JOBCLOCK_AZURITE_QUEUE_ENDPOINT")
	if ep == "" {
		const msg = `JOBCLOCK_AZURITE_QUEUE_ENDPOINT is not set; start Azurite with: eval "$(scripts/start-azurite.sh)"`
		if os.Getenv("CI") == "true" {
			tb.Fatal(msg)
		}
		tb.Skip(msg)
	}
	u, err := url.Parse(ep)
	if err != nil || u.Host == "" {
		tb.Fatalf("JOBCLOCK_AZURITE_QUEUE_ENDPOINT=%q is not a URL like http://127.0.0.1:10001/devstoreaccount1/", ep)
	}
	account := strings.Trim(u.Path, "/")
	cred, err := azqueue.NewSharedKeyCredential(account, devKey)
	if err != nil {
		tb.Fatal(err)
	}
	svc, err := azqueue.NewServiceClientWithSharedKeyCredential(ep, cred, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return &peer{base: u.Scheme + "://" + u.Host + "/", account: account, svc: svc, cred: cred}
}

// newQueue creates a queue with a unique name and deletes it when the test
// ends.
func (p *peer) newQueue(tb testing.TB) string {
	tb.Helper()
	name := p.queueName(tb)
	if _, err := p.svc.CreateQueue(context.Background(), name, nil); err != nil {
		tb.Fatalf("create queue %s: %v", name, err)
	}
	tb.Cleanup(func() { _, _ = p.svc.DeleteQueue(context.Background(), name, nil) })
	return name
}

// queueName returns a unique valid queue name without creating the queue.
func (p *peer) queueName(tb testing.TB) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "jc-" + hex.EncodeToString(b[:])
}

// sas signs a service SAS for queue, valid over http and https (Azurite runs
// over http; the SDK's GetSASURL signs for https only).
func (p *peer) sas(tb testing.TB, queue string, perms sas.QueuePermissions, expiry time.Time, cred *azqueue.SharedKeyCredential) string {
	tb.Helper()
	if cred == nil {
		cred = p.cred
	}
	qp, err := sas.QueueSignatureValues{
		Protocol:    sas.ProtocolHTTPSandHTTP,
		ExpiryTime:  expiry.UTC(),
		Permissions: perms.String(),
		QueueName:   queue,
	}.SignWithSharedKey(cred)
	if err != nil {
		tb.Fatal(err)
	}
	return "?" + qp.Encode()
}

// addSAS is a SAS with the add permission, valid for an hour.
func (p *peer) addSAS(tb testing.TB, queue string) string {
	return p.sas(tb, queue, sas.QueuePermissions{Add: true}, time.Now().Add(time.Hour), nil)
}

// receive dequeues and deletes every message of queue.
func (p *peer) receive(tb testing.TB, queue string) []*azqueue.DequeuedMessage {
	tb.Helper()
	q := p.svc.NewQueueClient(queue)
	n := int32(32)
	resp, err := q.DequeueMessages(context.Background(), &azqueue.DequeueMessagesOptions{NumberOfMessages: &n})
	if err != nil {
		tb.Fatalf("dequeue from %s: %v", queue, err)
	}
	for _, m := range resp.Messages {
		if _, err := q.DeleteMessage(context.Background(), *m.MessageID, *m.PopReceipt, nil); err != nil {
			tb.Fatalf("delete message: %v", err)
		}
	}
	return resp.Messages
}
