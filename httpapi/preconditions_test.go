package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/jobclock/scheduler/httpapi"
	"github.com/jobclock/scheduler/store/memory"
)

// serveWith sends one request to h and returns the recorded answer.
func serveWith(h http.Handler, method, path, body string, header map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	for k, val := range header {
		req.Header.Set(k, val)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// TestPutJobIfNoneMatch: a PUT with If-None-Match: * creates the job, and
// leaves a job that exists as it is, answering 412.
func TestPutJobIfNoneMatch(t *testing.T) {
	s, _ := newSeeingScheduler(t, memory.New(), nil)
	h := httpapi.New(s, nil)
	star := map[string]string{"If-None-Match": "*"}
	job := basicAuthJob("pw")
	if rec := serveWith(h, "PUT", jc1+"/jobs/j1"+v, job, star); rec.Code != http.StatusCreated {
		t.Fatalf("PUT of a new job with If-None-Match: * = %d %s, want 201", rec.Code, rec.Body)
	}
	before, err := s.GetJob(context.Background(), "sub1/rg1/jc1", "j1")
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(job, `"interval": 2`, `"interval": 3`, 1)
	if changed == job {
		t.Fatal("the test's job has no interval to change")
	}
	if rec := serveWith(h, "PUT", jc1+"/jobs/j1"+v, changed, star); rec.Code != http.StatusPreconditionFailed {
		t.Errorf("PUT of an existing job with If-None-Match: * = %d %s, want 412", rec.Code, rec.Body)
	}
	after, err := s.GetJob(context.Background(), "sub1/rg1/jc1", "j1")
	if err != nil {
		t.Fatal(err)
	}
	if after.ETag != before.ETag || after.Version != before.Version {
		t.Errorf("job after the refused PUT has ETag %q, version %d; want %q, %d", after.ETag, after.Version, before.ETag, before.Version)
	}
	if rec := serveWith(h, "PUT", jc1+"/jobs/j1"+v, job, map[string]string{"If-None-Match": `"abc"`}); rec.Code != http.StatusBadRequest {
		t.Errorf(`PUT with If-None-Match: "abc" = %d %s, want 400`, rec.Code, rec.Body)
	}
}

// TestDeleteCalendarIfMatch: a DELETE of a calendar with a stale If-Match
// answers 412 and leaves the calendar; with its ETag it deletes it; with
// any If-Match, a calendar or collection that does not exist answers 412.
func TestDeleteCalendarIfMatch(t *testing.T) {
	s, _ := newSeeingScheduler(t, memory.New(), nil)
	h := httpapi.New(s, nil)
	path := jc1 + "/calendars/holidays" + v
	rec := serveWith(h, "PUT", path, `{"properties": {"dates": ["2026-12-25"]}}`, nil)
	if rec.Code != http.StatusCreated {
		t.Fatalf("PUT calendar = %d %s", rec.Code, rec.Body)
	}
	etag := rec.Header().Get("ETag")
	if etag == "" {
		t.Fatal("PUT calendar answered no ETag")
	}
	if rec := serveWith(h, "DELETE", path, "", map[string]string{"If-Match": `"0000000000000000"`}); rec.Code != http.StatusPreconditionFailed {
		t.Errorf("DELETE with a stale If-Match = %d %s, want 412", rec.Code, rec.Body)
	}
	if rec := serveWith(h, "GET", path, "", nil); rec.Code != http.StatusOK {
		t.Errorf("GET after the refused DELETE = %d %s, want 200", rec.Code, rec.Body)
	}
	if rec := serveWith(h, "DELETE", path, "", map[string]string{"If-Match": etag}); rec.Code != http.StatusOK {
		t.Errorf("DELETE with the current If-Match = %d %s, want 200", rec.Code, rec.Body)
	}
	if rec := serveWith(h, "GET", path, "", nil); rec.Code != http.StatusNotFound {
		t.Errorf("GET after the DELETE = %d %s, want 404", rec.Code, rec.Body)
	}
	// A calendar, or a collection, that does not exist fails If-Match, as
	// for jobs and collections; without If-Match it is not found.
	missing := rg1 + "/nope/calendars/holidays" + v
	for _, p := range []string{path, missing} {
		for _, m := range []string{etag, "*"} {
			rec := serveWith(h, "DELETE", p, "", map[string]string{"If-Match": m})
			if rec.Code != http.StatusPreconditionFailed || !strings.Contains(rec.Body.String(), "requires the calendar 'holidays' to exist") {
				t.Errorf("DELETE %s of a missing calendar with If-Match: %s = %d %s, want 412 saying it does not exist", p, m, rec.Code, rec.Body)
			}
		}
		if rec := serveWith(h, "DELETE", p, "", nil); rec.Code != http.StatusNotFound {
			t.Errorf("DELETE %s of a missing calendar without If-Match = %d %s, want 404", p, rec.Code, rec.Body)
		}
	}
}

// TestDeleteJobAndCollectionIfMatch: a DELETE of a job or job collection
// with a stale entity tag in If-Match deletes nothing and answers 412;
// with the current one it deletes; with If-Match: * it deletes what
// exists and answers 412 for what does not.
func TestDeleteJobAndCollectionIfMatch(t *testing.T) {
	s, _ := newSeeingScheduler(t, memory.New(), nil)
	h := httpapi.New(s, nil)
	job := jc1 + "/jobs/j1" + v
	for _, name := range []string{"j1", "j2"} {
		if rec := serveWith(h, "PUT", jc1+"/jobs/"+name+v, basicAuthJob("pw"), nil); rec.Code != http.StatusCreated {
			t.Fatalf("PUT job %s = %d %s", name, rec.Code, rec.Body)
		}
	}
	stale := map[string]string{"If-Match": `"0000000000000000"`}
	if rec := serveWith(h, "DELETE", job, "", stale); rec.Code != http.StatusPreconditionFailed {
		t.Errorf("DELETE job with a stale entity tag in If-Match = %d %s, want 412", rec.Code, rec.Body)
	}
	if rec := serveWith(h, "DELETE", jc1+v, "", stale); rec.Code != http.StatusPreconditionFailed {
		t.Errorf("DELETE collection with a stale entity tag in If-Match = %d %s, want 412", rec.Code, rec.Body)
	}
	for _, path := range []string{job, jc1 + "/jobs/j2" + v, jc1 + v} {
		if rec := serveWith(h, "GET", path, "", nil); rec.Code != http.StatusOK {
			t.Errorf("GET %s after the refused DELETEs = %d %s, want 200", path, rec.Code, rec.Body)
		}
	}
	// The current entity tags delete.
	cur := func(path string) map[string]string {
		rec := serveWith(h, "GET", path, "", nil)
		if rec.Code != http.StatusOK || rec.Header().Get("ETag") == "" {
			t.Fatalf("GET %s = %d, ETag %q", path, rec.Code, rec.Header().Get("ETag"))
		}
		return map[string]string{"If-Match": rec.Header().Get("ETag")}
	}
	j2 := jc1 + "/jobs/j2" + v
	if rec := serveWith(h, "DELETE", j2, "", cur(j2)); rec.Code != http.StatusOK {
		t.Errorf("DELETE job with its current ETag in If-Match = %d %s, want 200", rec.Code, rec.Body)
	}
	if rec := serveWith(h, "GET", j2, "", nil); rec.Code != http.StatusNotFound {
		t.Errorf("GET the job deleted with its current ETag = %d, want 404", rec.Code)
	}
	if rec := serveWith(h, "DELETE", j2, "", stale); rec.Code != http.StatusPreconditionFailed {
		t.Errorf("DELETE of a deleted job with an entity tag = %d %s, want 412", rec.Code, rec.Body)
	}
	star := map[string]string{"If-Match": "*"}
	if rec := serveWith(h, "DELETE", job, "", star); rec.Code != http.StatusOK {
		t.Errorf("DELETE job with If-Match: * = %d %s, want 200", rec.Code, rec.Body)
	}
	if rec := serveWith(h, "DELETE", job, "", star); rec.Code != http.StatusPreconditionFailed {
		t.Errorf("DELETE of a deleted job with If-Match: * = %d %s, want 412", rec.Code, rec.Body)
	}
	if rec := serveWith(h, "DELETE", jc1+v, "", star); rec.Code != http.StatusOK {
		t.Errorf("DELETE collection with If-Match: * = %d %s, want 200", rec.Code, rec.Body)
	}
	if rec := serveWith(h, "DELETE", jc1+v, "", star); rec.Code != http.StatusPreconditionFailed {
		t.Errorf("DELETE of a deleted collection with If-Match: * = %d %s, want 412", rec.Code, rec.Body)
	}
}

// TestPutJobMisspeltEnvelope: a job body without properties names the
// members it has instead, with the one it may mean.
func TestPutJobMisspeltEnvelope(t *testing.T) {
	s, _ := newSeeingScheduler(t, memory.New(), nil)
	h := httpapi.New(s, nil)
	for body, want := range map[string]string{
		`{"prop": {}}`:                    `\"prop\" is not one of its members","target"`,
		`{"propertes": {}}`:               `\"propertes\" is not one of its members, did you mean \"properties\"?`,
		`{"action": {}, "recurrence": 1}`: `\"action\", \"recurrence\" are not among its members`,
	} {
		rec := serveWith(h, "PUT", jc1+"/jobs/j1"+v, body, nil)
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), want) {
			t.Errorf("PUT %s = %d %s, want 400 naming %s", body, rec.Code, rec.Body, want)
		}
	}
}

// TestPutJobUnchanged: a PUT of the body a job already has answers 200
// with the job's ETag, which an If-Match taken before it still matches;
// the first PUT created the job (201).
func TestPutJobUnchanged(t *testing.T) {
	s, _ := newSeeingScheduler(t, memory.New(), nil)
	h := httpapi.New(s, nil)
	job := basicAuthJob("pw")
	first := serveWith(h, "PUT", jc1+"/jobs/j1"+v, job, nil)
	if first.Code != http.StatusCreated {
		t.Fatalf("first PUT = %d %s, want 201", first.Code, first.Body)
	}
	etag := first.Header().Get("ETag")
	again := serveWith(h, "PUT", jc1+"/jobs/j1"+v, job, nil)
	if again.Code != http.StatusOK || again.Header().Get("ETag") != etag {
		t.Fatalf("PUT of the same body = %d, ETag %q; want 200 and %q", again.Code, again.Header().Get("ETag"), etag)
	}
	changed := strings.Replace(job, `"interval": 2`, `"interval": 3`, 1)
	if rec := serveWith(h, "PUT", jc1+"/jobs/j1"+v, changed, map[string]string{"If-Match": etag}); rec.Code != http.StatusOK || rec.Header().Get("ETag") == etag {
		t.Errorf("PUT of a change with the ETag from before the unchanged PUT = %d %s, ETag %q; want 200 and a new ETag", rec.Code, rec.Body, rec.Header().Get("ETag"))
	}
}

// beforeDeleteStore is a memory store whose next DeleteJob or
// DeleteCollection, once armed, first runs a write of the test's: a
// write of another client that lands just before the delete's own.
type beforeDeleteStore struct {
	*memory.Store
	mu     sync.Mutex
	before func()
}

func (b *beforeDeleteStore) arm(f func()) {
	b.mu.Lock()
	b.before = f
	b.mu.Unlock()
}

func (b *beforeDeleteStore) fire() {
	b.mu.Lock()
	f := b.before
	b.before = nil
	b.mu.Unlock()
	if f != nil {
		f()
	}
}

func (b *beforeDeleteStore) DeleteJob(ctx context.Context, collection, name, etag string) error {
	b.fire()
	return b.Store.DeleteJob(ctx, collection, name, etag)
}

func (b *beforeDeleteStore) DeleteCollection(ctx context.Context, name, etag string) error {
	b.fire()
	return b.Store.DeleteCollection(ctx, name, etag)
}

// TestDeleteIfMatchWriteBetween: a DELETE of a job or job collection with
// the current entity tag in If-Match, and a write of it by another client
// that lands just before the store deletes, deletes nothing and answers
// 412: the store checks the tag in the delete itself. The other write
// stays.
func TestDeleteIfMatchWriteBetween(t *testing.T) {
	ctx := context.Background()
	st := &beforeDeleteStore{Store: memory.New()}
	s, _ := newSeeingScheduler(t, st, nil)
	h := httpapi.New(s, nil)
	job := jc1 + "/jobs/j1" + v
	if rec := serveWith(h, "PUT", job, basicAuthJob("pw"), nil); rec.Code != http.StatusCreated {
		t.Fatalf("PUT job = %d %s", rec.Code, rec.Body)
	}
	for _, tt := range []struct {
		what, path string
		write      func() (string, error) // the other client's, answering the new ETag
	}{
		{"job", job, func() (string, error) {
			r, err := s.PatchJob(ctx, "sub1/rg1/jc1", "j1", []byte(`{"properties": {"state": "Disabled"}}`), nil)
			if err != nil {
				return "", err
			}
			return r.ETag, nil
		}},
		{"job collection", jc1 + v, func() (string, error) {
			r, err := s.PatchCollection(ctx, "sub1/rg1/jc1", []byte(`{"properties": {"state": "Disabled"}}`), nil)
			if err != nil {
				return "", err
			}
			return r.ETag, nil
		}},
	} {
		rec := serveWith(h, "GET", tt.path, "", nil)
		if rec.Code != http.StatusOK || rec.Header().Get("ETag") == "" {
			t.Fatalf("GET %s = %d, ETag %q", tt.what, rec.Code, rec.Header().Get("ETag"))
		}
		current := rec.Header().Get("ETag")
		var written string
		var werr error
		st.arm(func() { written, werr = tt.write() })
		rec = serveWith(h, "DELETE", tt.path, "", map[string]string{"If-Match": current})
		if werr != nil {
			t.Fatalf("the other client's write of the %s: %v", tt.what, werr)
		}
		if rec.Code != http.StatusPreconditionFailed {
			t.Errorf("DELETE %s with If-Match %s, written again just before the delete = %d %s, want 412", tt.what, current, rec.Code, rec.Body)
		}
		rec = serveWith(h, "GET", tt.path, "", nil)
		if rec.Code != http.StatusOK || rec.Header().Get("ETag") != `"`+written+`"` {
			t.Errorf("GET %s after the refused DELETE = %d, ETag %s; want 200 with the other write's ETag %q", tt.what, rec.Code, rec.Header().Get("ETag"), written)
		}
	}
}
