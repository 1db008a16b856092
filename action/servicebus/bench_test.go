package servicebus_test

import (
	"context"
	"testing"
	"time"

	"github.com/jobclock/scheduler/action/servicebus"
)

// BenchmarkExecute measures sustained sends through one executor (one
// connection, one sender link) against the local peer.
func BenchmarkExecute(b *testing.B) {
	p := peer(b)
	keyName, key := p.newKey(b)
	e := servicebus.New(p.options())
	defer e.Close(context.Background())
	req := queueRequest("contoso-sb", "bench-"+randHex(3), keyName, key, `{"report":"nightly"}`)
	ctx := context.Background()
	if _, err := e.Execute(ctx, req); err != nil { // connect outside the timing
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := e.Execute(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkExecuteParallel is BenchmarkExecute with GOMAXPROCS senders
// sharing the connection and link.
func BenchmarkExecuteParallel(b *testing.B) {
	p := peer(b)
	keyName, key := p.newKey(b)
	e := servicebus.New(p.options())
	defer e.Close(context.Background())
	req := queueRequest("contoso-sb", "bench-"+randHex(3), keyName, key, `{"report":"nightly"}`)
	if _, err := e.Execute(context.Background(), req); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := e.Execute(context.Background(), req); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
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
