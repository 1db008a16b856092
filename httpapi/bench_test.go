package httpapi_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/httpapi"
	"github.com/jobclock/scheduler/store/memory"
)

// benchHandler returns a handler over an in-memory store holding
// collection sub1/rg1/jc1 with job j1.
func benchHandler(b *testing.B) http.Handler {
	b.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	s, err := scheduler.New(memory.New(), &scheduler.Config{Logger: log})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.PutCollection(ctx, "sub1/rg1/jc1", &scheduler.JobCollection{Properties: scheduler.CollectionProperties{SKU: &scheduler.SKU{Name: scheduler.SKUP20Premium}}}, nil); err != nil {
		b.Fatal(err)
	}
	// A budget no benchmark uses up, so that its cost is measured but never
	// a 429.
	return httpapi.New(s, &httpapi.Options{Logger: log, Throttle: &httpapi.Throttle{ReadsPerWindow: 1 << 40, WritesPerWindow: 1 << 40}})
}

// benchJob is a daily job that the benchmarks put.
const benchJob = `{"properties": {
  "action": {"type": "Http", "request": {"uri": "http://example.com/ok", "method": "GET"}, "retryPolicy": {"retryType": "None"}},
  "recurrence": {"frequency": "Day", "interval": 1}, "state": "Disabled"}}`

func BenchmarkPutJob(b *testing.B) {
	h := benchHandler(b)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("PUT", jc1+"/jobs/j1"+v, strings.NewReader(benchJob)))
		if rec.Code/100 != 2 {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
}

func BenchmarkGetJob(b *testing.B) {
	h := benchHandler(b)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("PUT", jc1+"/jobs/j1"+v, strings.NewReader(benchJob)))
	if rec.Code != 201 {
		b.Fatalf("PUT: %d %s", rec.Code, rec.Body)
	}
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", jc1+"/jobs/j1"+v, nil))
		if rec.Code != 200 {
			b.Fatalf("status %d", rec.Code)
		}
	}
}
