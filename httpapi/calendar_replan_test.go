package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/httpapi"
	"github.com/jobclock/scheduler/store/memory"
)

// TestCalendarChangeMovesNextExecutionTime: PUT of a calendar that
// excludes the day of a job's planned occurrence moves the job's
// nextExecutionTime (onExcluded NextIncluded: to the next day) in the
// answer of GET job, and PUT of one that no longer excludes it brings it
// back.
func TestCalendarChangeMovesNextExecutionTime(t *testing.T) {
	s, err := scheduler.New(memory.New(), quiet)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutCollection(context.Background(), "sub1/rg1/jc", nil, nil); err != nil {
		t.Fatal(err)
	}
	h := httpapi.New(s, nil)
	const jc = "/subscriptions/sub1/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/jc"
	const v = "?api-version=2016-03-01"
	do := func(method, path, body string) map[string]any {
		t.Helper()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, jc+path+v, strings.NewReader(body)))
		if rec.Code != http.StatusOK && rec.Code != http.StatusCreated {
			t.Fatalf("%s %s: %d %s", method, path, rec.Code, rec.Body)
		}
		var out map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	start := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, 3).Add(12 * time.Hour)
	calendar := func(date time.Time) string {
		return `{"properties": {"dates": ["` + date.Format(time.DateOnly) + `"]}}`
	}
	do("PUT", "/calendars/holidays", calendar(start.AddDate(-1, 0, 0)))
	do("PUT", "/jobs/weekly", `{"properties": {"startTime": "`+start.Format(time.RFC3339)+`",
		"action": {"type": "Http", "request": {"uri": "http://example.com/", "method": "GET"}},
		"recurrence": {"frequency": "Week", "schedule": {"weekDays": ["`+start.Weekday().String()+`"], "hours": [12], "minutes": [0]},
			"calendar": "holidays", "onExcluded": "NextIncluded"}}}`)
	next := func() string {
		t.Helper()
		status, _ := do("GET", "/jobs/weekly", "")["properties"].(map[string]any)["status"].(map[string]any)
		got, _ := status["nextExecutionTime"].(string)
		return got
	}
	if got, want := next(), start.Format(time.RFC3339); got != want {
		t.Fatalf("nextExecutionTime = %q, want %q", got, want)
	}
	do("PUT", "/calendars/holidays", calendar(start))
	if got, want := next(), start.AddDate(0, 0, 1).Format(time.RFC3339); got != want {
		t.Errorf("nextExecutionTime after the planned day was excluded = %q, want %q", got, want)
	}
	do("PUT", "/calendars/holidays", calendar(start.AddDate(-1, 0, 0)))
	if got, want := next(), start.Format(time.RFC3339); got != want {
		t.Errorf("nextExecutionTime after the day was no longer excluded = %q, want %q", got, want)
	}
}
