package storagequeue_test

import (
	"context"
	"testing"
	"time"

	"github.com/jobclock/scheduler/action/storagequeue"
)

// BenchmarkExecute measures sustained sends through one executor (a cached
// client and kept-alive connections) against Azurite.
func BenchmarkExecute(b *testing.B) {
	p := azurite(b)
	q := p.newQueue(b)
	e := storagequeue.New(&storagequeue.Options{Endpoint: storagequeue.PathStyle(p.base)})
	defer e.Close()
	req := request(p.account, q, p.addSAS(b, q), `{"report":"nightly"}`)
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		if _, err := e.Execute(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkExecuteParallel is BenchmarkExecute with GOMAXPROCS senders.
func BenchmarkExecuteParallel(b *testing.B) {
	p := azurite(b)
	q := p.newQueue(b)
	e := storagequeue.New(&storagequeue.Options{Endpoint: storagequeue.PathStyle(p.base)})
	defer e.Close()
	req := request(p.account, q, p.addSAS(b, q), `{"report":"nightly"}`)
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
