package servicebus_test

import (
	"context"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"

	"github.com/jobclock/scheduler/action/servicebus"
	"github.com/jobclock/scheduler/internal/testproc"
)

// The send benchmarks go through the local peer, so their messages per
// second measure the peer and the loopback network as much as the
// executor. Each reports three figures: msgs/s; cpu-µs/op, the processor
// time of this process (executor and SDK) per message; and peer-cpu-µs/op,
// the peer's. The BenchmarkSDKSend pair sends the same messages with the
// SDK alone, in the same run against the same peer: the executor's cost is
// its figures against theirs.

// BenchmarkExecute measures sustained sends through one executor (one
// connection, one sender link) against the local peer.
func BenchmarkExecute(b *testing.B) {
	benchExecute(b, false)
}

// BenchmarkExecuteParallel is BenchmarkExecute with GOMAXPROCS senders
// sharing the connection and link.
func BenchmarkExecuteParallel(b *testing.B) {
	benchExecute(b, true)
}

func benchExecute(b *testing.B, parallel bool) {
	p := peer(b)
	keyName, key := p.newKey(b)
	e := servicebus.New(p.options())
	defer e.Close(context.Background())
	req := queueRequest("contoso-sb", "bench-"+randHex(3), keyName, key, `{"report":"nightly"}`)
	measureSends(b, p, parallel, func(ctx context.Context) error {
		_, err := e.Execute(ctx, req)
		return err
	})
}

// BenchmarkSDKSend sends what BenchmarkExecute sends (the same body,
// message id and application properties, in a new message each time,
// within a timeout) with an azservicebus sender of its own.
func BenchmarkSDKSend(b *testing.B) {
	benchSDKSend(b, false)
}

// BenchmarkSDKSendParallel is BenchmarkSDKSend with GOMAXPROCS senders
// sharing the connection and link.
func BenchmarkSDKSendParallel(b *testing.B) {
	benchSDKSend(b, true)
}

func benchSDKSend(b *testing.B, parallel bool) {
	p := peer(b)
	keyName, key := p.newKey(b)
	c, err := azservicebus.NewClientFromConnectionString("Endpoint=sb://"+p.addr+"/;SharedAccessKeyName="+keyName+
		";SharedAccessKey="+key+";UseDevelopmentEmulator=true", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close(context.Background())
	s, err := c.NewSender("bench-"+randHex(3), nil)
	if err != nil {
		b.Fatal(err)
	}
	req := queueRequest("contoso-sb", "", keyName, key, `{"report":"nightly"}`)
	body := req.Action.ServiceBusQueueMessage.Message
	measureSends(b, p, parallel, func(ctx context.Context) error {
		id := req.ClientRequestID()
		msg := &azservicebus.Message{Body: []byte(body), MessageID: &id, ApplicationProperties: map[string]any{
			servicebus.PropertyJobID:                 req.JobID(),
			servicebus.PropertyJobCollectionID:       req.CollectionID,
			servicebus.PropertyExecutionTag:          req.ExecutionTag(),
			servicebus.PropertyClientRequestID:       req.ClientRequestID(),
			servicebus.PropertyExpectedExecutionTime: req.ExpectedTime.UTC().Format(time.RFC3339),
		}}
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		return s.SendMessage(ctx, msg, nil)
	})
}

// measureSends calls send once to connect, then in b's loop, serially or
// from GOMAXPROCS goroutines, and reports msgs/s, cpu-µs/op and
// peer-cpu-µs/op.
func measureSends(b *testing.B, p *sbPeer, parallel bool, send func(context.Context) error) {
	ctx := context.Background()
	if err := send(ctx); err != nil { // connect outside the timing
		b.Fatal(err)
	}
	peer0, cpu0 := p.stats(b).CPUMicros, testproc.CPUTime()
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
	b.ReportMetric(float64(p.stats(b).CPUMicros-peer0)/float64(b.N), "peer-cpu-µs/op")
}

// BenchmarkFirstSend measures the first send of a new executor: the AMQP
// connection, two CBS token exchanges, the sender and management links, and
// the send.
func BenchmarkFirstSend(b *testing.B) {
	p := peer(b)
	keyName, key := p.newKey(b)
	req := queueRequest("contoso-sb", "bench-"+randHex(3), keyName, key, `{"report":"nightly"}`)
	ctx := context.Background()
	for b.Loop() {
		e := servicebus.New(p.options())
		if _, err := e.Execute(ctx, req); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		e.Close(ctx)
		b.StartTimer()
	}
}
