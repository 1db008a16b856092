package http_test

import (
	"context"
	"io"
	nethttp "net/http"
	"strings"
	"testing"
	"time"

	httpaction "github.com/jobclock/scheduler/action/http"
	"github.com/jobclock/scheduler/internal/testproc"
)

// BenchmarkExecute measures attempts per second against a loopback server
// that answers 200 with a short body, serially and from GOMAXPROCS
// goroutines. The net-http runs send the same request (method, body,
// headers, the scheduler's metadata headers) with a net/http client alone,
// read the response body and check the status, in the same run: the
// executor's cost is its figures against theirs. Each also reports
// cpu-µs/op, the processor time of the process (client and the loopback
// server) per request.
func BenchmarkExecute(b *testing.B) {
	srv := newServer(b, nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		w.Write([]byte("ok"))
	}))
	ex := newExecutor(b, nil)
	req := newRequest("POST", srv.URL+"/hook")
	req.Action.Request.Body = `{"job":"nightly"}`
	req.Action.Request.Headers = map[string]string{"Content-Type": "application/json"}
	execute := func() error {
		_, err := ex.Execute(context.Background(), req)
		return err
	}

	client := &nethttp.Client{Transport: &nethttp.Transport{MaxIdleConnsPerHost: 16}}
	defer client.CloseIdleConnections()
	plain := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		hreq, err := nethttp.NewRequestWithContext(ctx, "POST", srv.URL+"/hook", strings.NewReader(req.Action.Request.Body))
		if err != nil {
			return err
		}
		hreq.Header.Set("Content-Type", "application/json")
		hreq.Header.Set("User-Agent", httpaction.DefaultUserAgent)
		hreq.Header[httpaction.HeaderJobID] = []string{req.JobID()}
		hreq.Header[httpaction.HeaderJobCollectionID] = []string{req.CollectionID}
		hreq.Header[httpaction.HeaderExpectedExecutionTime] = []string{req.ExpectedTime.UTC().Format(time.RFC3339Nano)}
		hreq.Header[httpaction.HeaderExecutionTag] = []string{req.ExecutionTag()}
		hreq.Header[httpaction.HeaderClientRequestID] = []string{req.ClientRequestID()}
		resp, err := client.Do(hreq)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if _, err := io.ReadAll(resp.Body); err != nil {
			return err
		}
		if resp.StatusCode != nethttp.StatusOK {
			return &httpaction.StatusError{StatusCode: resp.StatusCode, Status: resp.Status}
		}
		return nil
	}

	b.Run("serial", func(b *testing.B) { measureRequests(b, false, execute) })
	b.Run("parallel", func(b *testing.B) { measureRequests(b, true, execute) })
	b.Run("net-http-serial", func(b *testing.B) { measureRequests(b, false, plain) })
	b.Run("net-http-parallel", func(b *testing.B) { measureRequests(b, true, plain) })
}

// measureRequests calls do in b's loop, serially or from GOMAXPROCS
// goroutines, and reports req/s and cpu-µs/op.
func measureRequests(b *testing.B, parallel bool, do func() error) {
	cpu0 := testproc.CPUTime()
	if parallel {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := do(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	} else {
		for b.Loop() {
			if err := do(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	testproc.ReportCPU(b, cpu0)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}
