package httpapi_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/httpapi"
	"github.com/jobclock/scheduler/store/memory"
)

// benchHandler returns a handler over an in-memory store holding
// collection sub1/rg1/jc1 with job j1.
func benchHandler(b *testing.B) http.Handler { return benchHandlerWith(b, nil) }

// benchHandlerWith is benchHandler with the Authenticator auth (nil:
// none).
func benchHandlerWith(b *testing.B, auth httpapi.Authenticator) http.Handler {
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
	return httpapi.New(s, &httpapi.Options{Logger: log, Authenticator: auth,
		Throttle: &httpapi.Throttle{ReadsPerWindow: min(1<<40, math.MaxInt), WritesPerWindow: min(1<<40, math.MaxInt)}})
}

// benchJob is a daily job that the benchmarks put; benchJobOther is the
// same job every other day. The put benchmarks put the two in turns, so
// that every put replaces the job (a put of the definition a job has
// writes nothing).
const (
	benchJob = `{"properties": {
  "action": {"type": "Http", "request": {"uri": "http://example.com/ok", "method": "GET"}, "retryPolicy": {"retryType": "None"}},
  "recurrence": {"frequency": "Day", "interval": 1}, "state": "Disabled"}}`
	benchJobOther = `{"properties": {
  "action": {"type": "Http", "request": {"uri": "http://example.com/ok", "method": "GET"}, "retryPolicy": {"retryType": "None"}},
  "recurrence": {"frequency": "Day", "interval": 2}, "state": "Disabled"}}`
)

// The benchmarks below hand the handler a request built as net/http's
// server hands it one: method, URL, headers and a body reader, with the
// request line and headers already parsed (the server reads them from the
// connection whatever the handler does). The ...TextRequest ones build
// each request with httptest.NewRequest instead, which parses a request
// text and allocates a 4 KB reader per call: they measure that parsing as
// well.

// newBenchRequest returns a request for method and target (a path and
// query) with body, as the server would pass it to the handler.
func newBenchRequest(b *testing.B, method, target string, body *bytes.Reader) *http.Request {
	var r *http.Request
	var err error
	if body != nil {
		body.Seek(0, io.SeekStart)
		r, err = http.NewRequestWithContext(context.Background(), method, "http://example.com"+target, body)
	} else {
		r, err = http.NewRequestWithContext(context.Background(), method, "http://example.com"+target, nil)
	}
	if err != nil {
		b.Fatal(err)
	}
	r.RemoteAddr, r.RequestURI = "192.0.2.1:1234", target
	return r
}

func BenchmarkPutJob(b *testing.B) {
	h := benchHandler(b)
	bodies := [2]*bytes.Reader{bytes.NewReader([]byte(benchJob)), bytes.NewReader([]byte(benchJobOther))}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, newBenchRequest(b, "PUT", jc1+"/jobs/j1"+v, bodies[i%2]))
		i++
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
		h.ServeHTTP(rec, newBenchRequest(b, "GET", jc1+"/jobs/j1"+v, nil))
		if rec.Code != 200 {
			b.Fatalf("status %d", rec.Code)
		}
	}
}

// BenchmarkGetJobWithToken is BenchmarkGetJob with a bearer token that
// TokenAuth accepts: what authentication adds to a request, the budget of
// failed authentications (Options.AuthFailures, by default) included.
func BenchmarkGetJobWithToken(b *testing.B) {
	const token = "bench-token-0123456789"
	auth, err := httpapi.NewTokenAuth(token + " *")
	if err != nil {
		b.Fatal(err)
	}
	h := benchHandlerWith(b, auth)
	put := httptest.NewRequest("PUT", jc1+"/jobs/j1"+v, strings.NewReader(benchJob))
	put.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, put)
	if rec.Code != 201 {
		b.Fatalf("PUT: %d %s", rec.Code, rec.Body)
	}
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		r := newBenchRequest(b, "GET", jc1+"/jobs/j1"+v, nil)
		r.Header.Set("Authorization", "Bearer "+token)
		h.ServeHTTP(rec, r)
		if rec.Code != 200 {
			b.Fatalf("status %d", rec.Code)
		}
	}
}

func BenchmarkPutJobTextRequest(b *testing.B) {
	h := benchHandler(b)
	bodies := [2]string{benchJob, benchJobOther}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("PUT", jc1+"/jobs/j1"+v, strings.NewReader(bodies[i%2])))
		i++
		if rec.Code/100 != 2 {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
}

func BenchmarkGetJobTextRequest(b *testing.B) {
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

// BenchmarkListHistory lists a full page (100) of a job's history: the
// entries of attempts as the engine records them, every one with its
// execution tag, every tenth a failure that faulted its occurrence with an
// HTTP status, and every fifth one that waited for its collection's
// limits, recorded straight into the store.
func BenchmarkListHistory(b *testing.B) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	st := memory.New()
	s, err := scheduler.New(st, &scheduler.Config{Logger: log})
	if err != nil {
		b.Fatal(err)
	}
	h := httpapi.New(s, &httpapi.Options{Logger: log,
		Throttle: &httpapi.Throttle{ReadsPerWindow: min(1<<40, math.MaxInt), WritesPerWindow: min(1<<40, math.MaxInt)}})
	ctx := context.Background()
	if _, err := s.PutCollection(ctx, "sub1/rg1/jc1", &scheduler.JobCollection{Properties: scheduler.CollectionProperties{SKU: &scheduler.SKU{Name: scheduler.SKUP20Premium}}}, nil); err != nil {
		b.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("PUT", jc1+"/jobs/j1"+v, strings.NewReader(strings.Replace(benchJob, `"Disabled"`, `"Enabled"`, 1))))
	if rec.Code != 201 {
		b.Fatalf("PUT: %d %s", rec.Code, rec.Body)
	}
	now := time.Now()
	claimed, err := st.ClaimDue(ctx, now.Add(48*time.Hour), "bench", now.Add(49*time.Hour), 1)
	if err != nil || len(claimed) != 1 {
		b.Fatalf("ClaimDue = %d jobs, %v; want the job", len(claimed), err)
	}
	var hist []scheduler.HistoryEntry
	at := now.Add(-200 * time.Minute)
	for k := range 200 {
		e := scheduler.HistoryEntry{Collection: "sub1/rg1/jc1", Job: "j1", ActionName: scheduler.MainAction, Status: scheduler.StatusCompleted,
			ExpectedExecutionTime: at, StartTime: at, EndTime: at.Add(200 * time.Millisecond), RepeatCount: k + 1,
			Message:      "Http Action - Response from host 'example.com': 'OK' Response Headers: Content-Type: application/json\n{\"ok\": true}",
			ExecutionTag: fmt.Sprintf("%016x", uint64(k)*0x9e3779b97f4a7c15)}
		if k%10 == 0 {
			e.Status, e.Message, e.Faulted, e.HTTPStatus = scheduler.StatusFailed, "Http Action - Response from host 'example.com': 'Bad Gateway'", true, 502
		}
		if k%5 == 0 {
			e.LimitWaitMillis = 1500
		}
		hist = append(hist, e)
		at = at.Add(time.Minute)
	}
	if err := st.Record(ctx, "bench", claimed[0], hist); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, newBenchRequest(b, "GET", jc1+"/jobs/j1/history"+v, nil))
		if rec.Code != 200 {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
}
