package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/jobclock/scheduler/httpapi"
	"github.com/jobclock/scheduler/store/memory"
)

// TestPatchDeleteIfNoneMatch: a PATCH or DELETE with If-None-Match: *,
// which holds only for a resource that does not exist (RFC 9110), changes
// nothing: 412 at If-None-Match for a job, job collection or calendar that
// exists, which stays as it was, and 404 for one that does not; another
// If-None-Match value is 400 at If-None-Match.
func TestPatchDeleteIfNoneMatch(t *testing.T) {
	s, _ := newSeeingScheduler(t, memory.New(), nil)
	h := httpapi.New(s, nil)
	job, cal := jc1+"/jobs/j1"+v, jc1+"/calendars/holidays"+v
	if rec := serveWith(h, "PUT", job, basicAuthJob("pw"), nil); rec.Code != http.StatusCreated {
		t.Fatalf("PUT job = %d %s", rec.Code, rec.Body)
	}
	if rec := serveWith(h, "PUT", cal, `{"properties": {"dates": ["2030-12-25"]}}`, nil); rec.Code != http.StatusCreated {
		t.Fatalf("PUT calendar = %d %s", rec.Code, rec.Body)
	}
	etag := func(path string) string {
		rec := serveWith(h, "GET", path, "", nil)
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s = %d %s", path, rec.Code, rec.Body)
		}
		return rec.Header().Get("ETag")
	}
	star := map[string]string{"If-None-Match": "*"}
	for _, tc := range []struct {
		name, method, path, missing, body string
	}{
		{"PATCH job", "PATCH", job, jc1 + "/jobs/nope" + v, `{"properties": {"state": "Disabled"}}`},
		{"DELETE job", "DELETE", job, jc1 + "/jobs/nope" + v, ""},
		{"PATCH collection", "PATCH", jc1 + v, rg1 + "/nope" + v, `{"properties": {"state": "Disabled"}}`},
		{"DELETE calendar", "DELETE", cal, jc1 + "/calendars/nope" + v, ""},
		{"DELETE collection", "DELETE", jc1 + v, rg1 + "/nope" + v, ""},
	} {
		before := etag(tc.path)
		rec := serveWith(h, tc.method, tc.path, tc.body, map[string]string{"If-None-Match": `"abc"`})
		if e := decodeError(t, rec); rec.Code != http.StatusBadRequest || e.Target != "If-None-Match" {
			t.Errorf(`%s with If-None-Match: "abc" = %d %+v, want 400 at If-None-Match`, tc.name, rec.Code, e)
		}
		rec = serveWith(h, tc.method, tc.path, tc.body, star)
		if e := decodeError(t, rec); rec.Code != http.StatusPreconditionFailed || e.Code != httpapi.CodePreconditionFailed || e.Target != "If-None-Match" {
			t.Errorf("%s of an existing resource with If-None-Match: * = %d %+v, want 412 PreconditionFailed at If-None-Match", tc.name, rec.Code, e)
		}
		if after := etag(tc.path); after != before {
			t.Errorf("%s refused: ETag %s after, %s before; want it unchanged", tc.name, after, before)
		}
		if rec := serveWith(h, tc.method, tc.missing, tc.body, star); rec.Code != http.StatusNotFound {
			t.Errorf("%s of a missing resource with If-None-Match: * = %d %s, want 404", tc.name, rec.Code, rec.Body)
		}
	}
}
