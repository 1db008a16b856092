package storagequeue_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"

	"github.com/jobclock/scheduler/action/storagequeue"
	"github.com/jobclock/scheduler/internal/testproc"
)

// The send benchmarks go through Azurite, so their messages per second
// measure Azurite as much as the executor. Each also reports cpu-µs/op,
// the processor time of this process (executor and SDK) per message, and
// the BenchmarkSDKEnqueue pair enqueues the same messages with the SDK
// alone in the same run: the executor's cost is its figures against
// theirs. Run them against a fresh Azurite (scripts/start-azurite.sh):
// once a minute Azurite deletes the extents of deleted messages one at a
// time, sorting its index again for each, and after the thousands of
// messages of one run that sweep stalls every request for minutes.

// BenchmarkExecute measures sustained sends through one executor (a cached
// client and kept-alive connections) against Azurite.
func BenchmarkExecute(b *testing.B) {
	benchExecute(b, false)
}

// BenchmarkExecuteParallel is BenchmarkExecute with GOMAXPROCS senders.
func BenchmarkExecuteParallel(b *testing.B) {
	benchExecute(b, true)
}

func benchExecute(b *testing.B, parallel bool) {
	p := azurite(b)
	q := p.newQueue(b)
	e := storagequeue.New(&storagequeue.Options{Endpoint: storagequeue.PathStyle(p.base)})
	defer e.Close()
	req := request(p.account, q, p.addSAS(b, q), `{"report":"nightly"}`)
	measureSends(b, parallel, func(ctx context.Context) error {
		_, err := e.Execute(ctx, req)
		return err
	})
}

// BenchmarkSDKEnqueue enqueues what BenchmarkExecute enqueues (the same
// text and client request id, within a timeout) with an azqueue client of
// its own.
func BenchmarkSDKEnqueue(b *testing.B) {
	benchSDKEnqueue(b, false)
}

// BenchmarkSDKEnqueueParallel is BenchmarkSDKEnqueue with GOMAXPROCS
// senders.
func BenchmarkSDKEnqueueParallel(b *testing.B) {
	benchSDKEnqueue(b, true)
}

func benchSDKEnqueue(b *testing.B, parallel bool) {
	p := azurite(b)
	q := p.newQueue(b)
	req := request(p.account, q, p.addSAS(b, q), `{"report":"nightly"}`)
	m := req.Action.QueueMessage
	// The executor's own retries (storagequeue.New without Options.Retry),
	// not the SDK's defaults, whose first retry waits four seconds, so
	// that both sides do the same work when Azurite drops a request; and
	// a bound on each try, so that a request Azurite never answers is
	// tried again instead of waiting out the send's timeout.
	retry := policy.RetryOptions{MaxRetries: 2, RetryDelay: 200 * time.Millisecond, MaxRetryDelay: 2 * time.Second, TryTimeout: 5 * time.Second}
	var tries atomic.Int64
	c, err := azqueue.NewQueueClientWithNoCredential(p.base+p.account+"/"+q+m.SASToken, &azqueue.ClientOptions{ClientOptions: azcore.ClientOptions{
		Retry:            retry,
		PerRetryPolicies: []policy.Policy{countTries{&tries}},
	}})
	if err != nil {
		b.Fatal(err)
	}
	measureSends(b, parallel, func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		ctx = policy.WithHTTPHeader(ctx, http.Header{"x-ms-client-request-id": []string{req.ClientRequestID()}})
		_, err := c.EnqueueMessage(ctx, m.Message, nil)
		return err
	})
	b.ReportMetric(float64(tries.Load())/float64(b.N+1), "tries/op")
}

// countTries counts the requests the SDK sends, retries included.
type countTries struct{ n *atomic.Int64 }

func (c countTries) Do(req *policy.Request) (*http.Response, error) {
	c.n.Add(1)
	return req.Next()
}

// measureSends calls send once to connect, then in b's loop, serially or
// from GOMAXPROCS goroutines, and reports msgs/s and cpu-µs/op.
func measureSends(b *testing.B, parallel bool, send func(context.Context) error) {
	ctx := context.Background()
	if err := send(ctx); err != nil { // connect outside the timing
		b.Fatal(err)
	}
	cpu0 := testproc.CPUTime()
	b.ResetTimer()
	start := time.Now()
	if parallel {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := send(ctx); err != nil {
					b.Error(err)
					return
				}
			}
		})
	} else {
		for b.Loop() {
			if err := send(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	testproc.ReportCPU(b, cpu0)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "msgs/s")
}

// BenchmarkFirstSend measures the first send of a new executor: client
// creation, a new TCP connection and the enqueue.
func BenchmarkFirstSend(b *testing.B) {
	p := azurite(b)
	q := p.newQueue(b)
	req := request(p.account, q, p.addSAS(b, q), `{"report":"nightly"}`)
	ctx := context.Background()
	for b.Loop() {
		e := storagequeue.New(&storagequeue.Options{Endpoint: storagequeue.PathStyle(p.base)})
		if _, err := e.Execute(ctx, req); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		e.Close()
		b.StartTimer()
	}
}
