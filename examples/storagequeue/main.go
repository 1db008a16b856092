// Command storagequeue runs a StorageQueue action against the Azurite
// emulator the way the scheduler does: it creates a queue with the
// emulator's well-known account key, signs a SAS token that may only add
// messages, executes the action with that token, then reads the message
// back and prints it.
//
//	eval "$(scripts/start-azurite.sh)"    # or: azurite-queue --queuePort 10001
//	go run ./examples/storagequeue -envelope
//
// The queue endpoint comes from -endpoint, else JOBCLOCK_AZURITE_QUEUE_ENDPOINT,
// else http://127.0.0.1:10001/devstoreaccount1/.
package main

import (
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"log"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/queueerror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/sas"

	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/action/storagequeue"
)

// devKey is the documented key of Azurite's devstoreaccount1; it is public.
const devKey = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

func main() {
	endpoint := flag.String("endpoint", "", "queue service URL with the account path (default $JOBCLOCK_AZURITE_QUEUE_ENDPOINT or http://127.0.0.1:10001/devstoreaccount1/)")
	queue := flag.String("queue", "jobclock-example", "queue name")
	message := flag.String("message", `{"report":"nightly"}`, "message text")
	envelope := flag.Bool("envelope", false, "wrap the message in the XML StorageQueueMessage envelope")
	b64 := flag.Bool("base64", false, "base64-encode the message")
	flag.Parse()
	if *endpoint == "" {
		*endpoint = os.Getenv("JOBCLOCK_AZURITE_QUEUE_ENDPOINT")
	}
	if *endpoint == "" {
		*endpoint = "http://127.0.0.1:10001/devstoreaccount1/"
	}
	if err := run(os.Stdout, *endpoint, *queue, *message, *envelope, *b64); err != nil {
		log.Fatal(err)
	}
}

func run(out io.Writer, endpoint, queue, message string, envelope, b64 bool) error {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return fmt.Errorf("-endpoint %q: want a URL such as http://127.0.0.1:10001/devstoreaccount1/", endpoint)
	}
	account := strings.Trim(u.Path, "/")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// 1. The queue's owner creates it with the account key...
	cred, err := azqueue.NewSharedKeyCredential(account, devKey)
	if err != nil {
		return err
	}
	svc, err := azqueue.NewServiceClientWithSharedKeyCredential(endpoint, cred, nil)
	if err != nil {
		return err
	}
	if _, err := svc.CreateQueue(ctx, queue, nil); err != nil && !queueerror.HasCode(err, queueerror.QueueAlreadyExists) {
		return fmt.Errorf("create queue %s: %w", queue, err)
	}
	// 2. ...and hands the scheduler a SAS token that can only add messages.
	// The emulator speaks http, so the token must allow it (spr=https,http).
	qp, err := sas.QueueSignatureValues{
		Protocol:    sas.ProtocolHTTPSandHTTP,
		ExpiryTime:  time.Now().UTC().Add(time.Hour),
		Permissions: (&sas.QueuePermissions{Add: true}).String(),
		QueueName:   queue,
	}.SignWithSharedKey(cred)
	if err != nil {
		return err
	}

	// 3. The scheduler executes the job's action with that token.
	var reg action.Registry
	sq := storagequeue.Register(&reg, &storagequeue.Options{
		Endpoint: storagequeue.PathStyle(u.Scheme + "://" + u.Host),
		Envelope: envelope,
		Base64:   b64,
		Region:   "local",
	})
	defer sq.Close()
	exec, _ := reg.Lookup(action.StorageQueue)
	res, err := exec.Execute(ctx, &action.Request{
		Action: &action.Action{Type: action.StorageQueue, QueueMessage: &action.StorageQueueMessage{
			StorageAccount: account, QueueName: queue, SASToken: "?" + qp.Encode(), Message: message,
		}},
		IDs:          action.StaticIDs{Job: "example-job", Tag: fmt.Sprintf("%x", time.Now().UnixNano()), ClientRequest: fmt.Sprintf("req-%d", time.Now().UnixNano())},
		CollectionID: "examples",
		ExpectedTime: time.Now().UTC().Truncate(time.Second),
		Occurrence:   1,
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(out, res.Message)

	// 4. A receiver reads it back.
	q := svc.NewQueueClient(queue)
	resp, err := q.DequeueMessage(ctx, nil)
	if err != nil {
		return fmt.Errorf("dequeue: %w", err)
	}
	for _, m := range resp.Messages {
		text := *m.MessageText
		fmt.Fprintf(out, "received message %s:\n%s\n", *m.MessageID, text)
		if b64 {
			if dec, err := base64.StdEncoding.DecodeString(text); err == nil {
				fmt.Fprintf(out, "decoded:\n%s\n", dec)
			}
		}
		if _, err := q.DeleteMessage(ctx, *m.MessageID, *m.PopReceipt, nil); err != nil {
			return fmt.Errorf("delete message: %w", err)
		}
	}
	return nil
}
