package httpapi_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/httpapi"
)

// TestWriteAnswersAsGet: the body of a job PUT's answer, and of a PATCH's,
// is the body of a GET right after it, status.health and a resumeTime
// given with an offset included, for several definitions, on each store.
func TestWriteAnswersAsGet(t *testing.T) {
	resume := time.Now().Add(72 * time.Hour).In(time.FixedZone("", 2*3600)).Truncate(time.Second).Format("2006-01-02T15:04:05-07:00")
	start := time.Now().Add(48 * time.Hour).In(time.FixedZone("", -5*3600)).Truncate(time.Second).Format("2006-01-02T15:04:05-07:00")
	const act = `"action": {"type": "Http", "request": {"uri": "http://example.com/", "method": "GET"}}`
	defs := []struct{ name, put, patch string }{
		{"hourly", `{"properties": {` + act + `, "recurrence": {"frequency": "Hour"}}}`,
			`{"properties": {"recurrence": {"interval": 2}}}`},
		{"paused until resumeTime", `{"properties": {` + act + `, "recurrence": {"frequency": "Day"}, "state": "Disabled",
			"stateReason": "maintenance", "resumeTime": "` + resume + `"}}`,
			`{"properties": {"stateReason": "longer", "resumeTime": "` + resume + `"}}`},
		{"disabled, paused by a patch", `{"properties": {` + act + `, "recurrence": {"frequency": "Minute", "interval": 5}, "state": "Disabled"}}`,
			`{"properties": {"resumeTime": "` + resume + `"}}`},
		{"one time, with a startTime and tags", `{"tags": {"team": "ops"}, "properties": {` + act + `, "startTime": "` + start + `"}}`,
			`{"tags": {"team": "dev"}}`},
		{"enabled by a patch", `{"properties": {` + act + `, "recurrence": {"frequency": "Week", "schedule": {"weekDays": ["Monday"], "hours": [8]}}, "state": "Disabled"}}`,
			`{"properties": {"state": "Enabled"}}`},
		{"with a count", `{"properties": {` + act + `, "recurrence": {"frequency": "Hour", "count": 3}}}`,
			`{"properties": {"recurrence": {"count": 5}}}`},
	}
	for name, newStore := range createOnlyStores {
		t.Run(name, func(t *testing.T) {
			s, err := scheduler.New(newStore(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.PutCollection(t.Context(), "sub1/rg1/jc-new", nil, nil); err != nil {
				t.Fatal(err)
			}
			h := httpapi.New(s, nil)
			for _, d := range defs {
				path := jcNew + "/jobs/" + "j" + v
				for _, w := range []struct{ method, body string }{{"PUT", d.put}, {"PATCH", d.patch}} {
					rec := serveWith(h, w.method, path, w.body, nil)
					if rec.Code != http.StatusOK && rec.Code != http.StatusCreated {
						t.Fatalf("%s: %s = %d %s", d.name, w.method, rec.Code, rec.Body)
					}
					var wrote, got map[string]any
					if err := json.Unmarshal(rec.Body.Bytes(), &wrote); err != nil {
						t.Fatalf("%s: %s answer: %v", d.name, w.method, err)
					}
					get := serveWith(h, "GET", path, "", nil)
					if err := json.Unmarshal(get.Body.Bytes(), &got); err != nil {
						t.Fatalf("%s: GET answer: %v", d.name, err)
					}
					if diff := cmp.Diff(got, wrote); diff != "" {
						t.Errorf("%s: %s answer differs from the GET after it (-GET +%s):\n%s", d.name, w.method, w.method, diff)
					}
					if rec.Header().Get("ETag") != get.Header().Get("ETag") {
						t.Errorf("%s: %s answered ETag %s, GET %s", d.name, w.method, rec.Header().Get("ETag"), get.Header().Get("ETag"))
					}
				}
				if rec := serveWith(h, "DELETE", path, "", nil); rec.Code != http.StatusOK {
					t.Fatalf("DELETE = %d %s", rec.Code, rec.Body)
				}
			}
		})
	}
}
