package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/jobclock/scheduler/httpapi"
	"github.com/jobclock/scheduler/store/memory"
)

// TestPreconditionFailedNamesHeader: a 412 names the header that does not
// hold, in its target and its message: If-None-Match for a PUT with
// If-None-Match: * of a job, collection or calendar that exists, If-Match
// for one whose If-Match wants a job that does not exist; an
// If-None-Match other than * is refused (400) at If-None-Match.
func TestPreconditionFailedNamesHeader(t *testing.T) {
	s, _ := newSeeingScheduler(t, memory.New(), nil)
	h := httpapi.New(s, nil)
	job := basicAuthJob("pw")
	if rec := serveWith(h, "PUT", jc1+"/jobs/j1"+v, job, nil); rec.Code != http.StatusCreated {
		t.Fatalf("PUT of a new job = %d %s, want 201", rec.Code, rec.Body)
	}
	cal := jc1 + "/calendars/holidays" + v
	rec := serveWith(h, "PUT", cal, `{"properties": {"dates": ["2026-12-25"]}}`, nil)
	if rec.Code != http.StatusCreated {
		t.Fatalf("PUT of a new calendar = %d %s, want 201", rec.Code, rec.Body)
	}
	calETag := rec.Header().Get("ETag")

	for _, tc := range []struct {
		name, path, body string
		header           map[string]string
		status           int
		target, says     string
	}{
		{"job exists, If-None-Match: *", jc1 + "/jobs/j1" + v, job,
			map[string]string{"If-None-Match": "*"}, http.StatusPreconditionFailed, "If-None-Match", "If-None-Match"},
		{"job exists, If-None-Match: * and a matching If-Match", jc1 + "/jobs/j1" + v, job,
			map[string]string{"If-None-Match": "*", "If-Match": "*"}, http.StatusPreconditionFailed, "If-None-Match", "If-None-Match"},
		{"no job, If-None-Match: * and If-Match", jc1 + "/jobs/j2" + v, job,
			map[string]string{"If-None-Match": "*", "If-Match": `"abc"`}, http.StatusPreconditionFailed, "If-Match", "If-Match"},
		{"job exists, stale If-Match", jc1 + "/jobs/j1" + v, job,
			map[string]string{"If-Match": `"abc"`}, http.StatusPreconditionFailed, "If-Match", "If-Match"},
		{"job, If-None-Match not *", jc1 + "/jobs/j1" + v, job,
			map[string]string{"If-None-Match": `"abc"`}, http.StatusBadRequest, "If-None-Match", "If-None-Match"},
		{"collection exists, If-None-Match: *", jc1 + v, `{"properties": {}}`,
			map[string]string{"If-None-Match": "*"}, http.StatusPreconditionFailed, "If-None-Match", "If-None-Match"},
		{"calendar exists, If-None-Match: *", cal, `{"properties": {"dates": ["2027-01-01"]}}`,
			map[string]string{"If-None-Match": "*"}, http.StatusPreconditionFailed, "If-None-Match", "If-None-Match"},
		{"calendar, If-None-Match not *", cal, `{"properties": {"dates": ["2027-01-01"]}}`,
			map[string]string{"If-None-Match": `"abc"`}, http.StatusBadRequest, "If-None-Match", "If-None-Match"},
		{"calendar, stale If-Match", cal, `{"properties": {"dates": ["2027-01-01"]}}`,
			map[string]string{"If-Match": `"abc"`}, http.StatusPreconditionFailed, "If-Match", "If-Match"},
	} {
		rec := serveWith(h, "PUT", tc.path, tc.body, tc.header)
		if rec.Code != tc.status {
			t.Errorf("%s: PUT = %d %s, want %d", tc.name, rec.Code, rec.Body, tc.status)
			continue
		}
		e := decodeError(t, rec)
		if e.Target != tc.target || !strings.Contains(e.Message, tc.says) {
			t.Errorf("%s: error target %q, message %q; want target %q and a message naming %s", tc.name, e.Target, e.Message, tc.target, tc.says)
		}
		if other := map[string]string{"If-Match": "If-None-Match", "If-None-Match": "If-Match"}[tc.says]; strings.Contains(strings.ReplaceAll(e.Message, tc.says, ""), other) {
			t.Errorf("%s: message %q names %s too", tc.name, e.Message, other)
		}
	}
	c, err := s.GetCalendar(context.Background(), "sub1/rg1/jc1", "holidays")
	if err != nil {
		t.Fatal(err)
	}
	if `"`+c.ETag+`"` != calETag {
		t.Errorf("calendar ETag after the refused PUTs = %q, want %s (unchanged)", c.ETag, calETag)
	}
}
