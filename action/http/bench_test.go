package http_test

import (
	"context"
	nethttp "net/http"
	"testing"
)

// BenchmarkExecute measures attempts per second against a loopback server
// that answers 200 with a short body.
func BenchmarkExecute(b *testing.B) {
	srv := newServer(b, nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		w.Write([]byte("ok"))
	}))
	ex := newExecutor(b, nil)
	req := newRequest("POST", srv.URL+"/hook")
	req.Action.Request.Body = `{"job":"nightly"}`
	req.Action.Request.Headers = map[string]string{"Content-Type": "application/json"}

	b.Run("serial", func(b *testing.B) {
		for b.Loop() {
			if _, err := ex.Execute(context.Background(), req); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
	})
	b.Run("parallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := ex.Execute(context.Background(), req); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
	})
}
