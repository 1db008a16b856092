package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/httpapi"
)

// listRef is the collection the list tests put their jobs in.
var listRef = httpapi.CollectionRef{Subscription: "sub1", ResourceGroup: "rg", Collection: "jc"}

// putListJobs puts jobs a to e in listRef over c: a, c and e Enabled,
// b and d Disabled; a, b and c tagged team=web, d team=ops.
func putListJobs(t *testing.T, c *httpapi.Client) {
	t.Helper()
	ctx := context.Background()
	if _, _, err := c.PutCollection(ctx, listRef, nil, nil); err != nil {
		t.Fatal(err)
	}
	for _, j := range []struct{ name, state, tags string }{
		{"a", "Enabled", `{"team": "web"}`},
		{"b", "Disabled", `{"team": "web"}`},
		{"c", "Enabled", `{"team": "web"}`},
		{"d", "Disabled", `{"team": "ops"}`},
		{"e", "Enabled", `{}`},
	} {
		body := `{"tags": ` + j.tags + `, "properties": {"action": {"type": "Http", "request": {"uri": "http://example.com/", "method": "GET"}},
			"recurrence": {"frequency": "Day"}, "state": "` + j.state + `"}}`
		if _, _, err := c.PutJobJSON(ctx, listRef, j.name, []byte(body), nil); err != nil {
			t.Fatalf("put %s: %v", j.name, err)
		}
	}
}

// jobNames are the names of the jobs of a page, in its order.
func jobNames(l *httpapi.JobListResult) []string {
	names := []string{}
	for _, j := range l.Value {
		_, name, _ := strings.Cut(j.Name, "/")
		names = append(names, name)
	}
	return names
}

// TestListJobsFilterAnd: the job list's $filter takes conditions on
// state, health and tags joined by "and", and keeps the jobs that pass
// all of them.
func TestListJobsFilterAnd(t *testing.T) {
	c, _ := clientOnIdle(t)
	putListJobs(t, c)
	for _, tt := range []struct {
		filter string
		want   []string
	}{
		{"state eq Enabled", []string{"a", "c", "e"}},
		{"state eq Enabled and tagName eq 'team'", []string{"a", "c"}},
		{"tagName eq 'team' and tagValue eq 'web' and state eq 'disabled'", []string{"b"}},
		{"tagValue eq 'ops' AND tagName eq 'team'", []string{"d"}},
		{"state eq Disabled and health eq OK", []string{"b", "d"}},
		{"state\teq Enabled\nand tagName eq 'team'", []string{"a", "c"}},
		{"state eq Completed and tagName eq 'team'", []string{}},
	} {
		got, err := c.ListJobs(context.Background(), listRef, &httpapi.ListOptions{Filter: tt.filter})
		if err != nil {
			t.Errorf("ListJobs($filter=%s): %v", tt.filter, err)
			continue
		}
		if diff := cmp.Diff(tt.want, jobNames(got)); diff != "" {
			t.Errorf("ListJobs($filter=%s) (-want +got):\n%s", tt.filter, diff)
		}
	}
}

// TestListFilterRefused: a $filter the list cannot apply is a 400 at
// $filter whose message names the $filter and the part at fault.
func TestListFilterRefused(t *testing.T) {
	c, _ := clientOnIdle(t)
	putListJobs(t, c)
	ctx := context.Background()
	for _, tt := range []struct {
		history bool
		filter  string
		part    string
	}{
		{false, "state eq Enabled or state eq Disabled", "'or'"},
		{false, "state eq Enabled and", "ends with 'and'"},
		{false, "state eq Enabled and state eq Disabled", "both name state"},
		{false, "tagValue eq 'web'", "needs one on tagName"},
		{false, "tagName eq team", "the value team is not in single quotes"},
		{false, "tagName eq 'team", "no closing quote"},
		{false, "name eq 'a'", "'name eq 'a'' is on name"},
		{false, "state gt Enabled", "compares with 'gt'"},
		{false, "not state eq Enabled", "'not state eq Enabled' is not a condition"},
		{false, "state eq Enabled and (health eq OK)", "'(health eq OK)' is on (health"},
		{true, "status eq Failed and faulted eq maybe", "maybe is not one of true, false"},
		{true, "faulted eq true or status eq Failed", "'or'"},
		{true, "state eq Enabled", "'state eq Enabled' is on state"},
	} {
		var err error
		opts := &httpapi.ListOptions{Filter: tt.filter}
		if tt.history {
			_, err = c.ListHistory(ctx, listRef, "a", opts)
		} else {
			_, err = c.ListJobs(ctx, listRef, opts)
		}
		var re *httpapi.ResponseError
		if !errors.As(err, &re) || re.StatusCode != http.StatusBadRequest || re.Detail.Target != "$filter" ||
			!strings.Contains(re.Detail.Message, "'"+tt.filter+"'") || !strings.Contains(re.Detail.Message, tt.part) {
			t.Errorf("$filter=%s: %v, want a 400 at $filter naming the $filter and saying %q", tt.filter, err, tt.part)
		}
	}
	// Problems in several conditions are reported together.
	_, err := c.ListHistory(ctx, listRef, "a", &httpapi.ListOptions{Filter: "status eq Done and faulted eq maybe"})
	var re *httpapi.ResponseError
	if !errors.As(err, &re) || len(re.Detail.Details) != 2 {
		t.Errorf("$filter with two bad conditions: %v, want a 400 with two details", err)
	}
}

// putOrderJobs puts jobs p1 to p5 in listRef over c, whose next
// executions are in this order: p2, p5, p1, p3, then p4, Disabled,
// which has none.
func putOrderJobs(t *testing.T, c *httpapi.Client) {
	t.Helper()
	ctx := context.Background()
	if _, _, err := c.PutCollection(ctx, listRef, nil, nil); err != nil {
		t.Fatal(err)
	}
	day := time.Now().UTC().Truncate(24 * time.Hour)
	for _, j := range []struct {
		name  string
		days  int
		state string
	}{{"p1", 3, "Enabled"}, {"p2", 1, "Enabled"}, {"p3", 5, "Enabled"}, {"p4", 2, "Disabled"}, {"p5", 2, "Enabled"}} {
		body := `{"properties": {"action": {"type": "Http", "request": {"uri": "http://example.com/", "method": "GET"}},
			"recurrence": {"frequency": "Day"}, "startTime": "` + day.AddDate(0, 0, j.days).Format(time.RFC3339) + `", "state": "` + j.state + `"}}`
		if _, _, err := c.PutJobJSON(ctx, listRef, j.name, []byte(body), nil); err != nil {
			t.Fatalf("put %s: %v", j.name, err)
		}
	}
}

// TestListJobsOrderBy: $orderby on the job list orders by the members
// the Go API orders by, in either direction, ties in name order and jobs
// without a value last (first in descending order), and lists what
// ListJobsOptions.OrderBy and Descending list.
func TestListJobsOrderBy(t *testing.T) {
	c, s := clientOnIdle(t)
	putOrderJobs(t, c)
	ctx := context.Background()
	for _, tt := range []struct {
		orderBy string
		opts    scheduler.ListJobsOptions
		want    []string
	}{
		{"properties/status/nextExecutionTime", scheduler.ListJobsOptions{OrderBy: scheduler.JobsByNextExecution}, []string{"p2", "p5", "p1", "p3", "p4"}},
		{"properties/status/nextExecutionTime asc", scheduler.ListJobsOptions{OrderBy: scheduler.JobsByNextExecution}, []string{"p2", "p5", "p1", "p3", "p4"}},
		{"Properties/Status/NextExecutionTime DESC", scheduler.ListJobsOptions{OrderBy: scheduler.JobsByNextExecution, Descending: true}, []string{"p4", "p3", "p1", "p5", "p2"}},
		{"nextExecutionTime desc", scheduler.ListJobsOptions{OrderBy: scheduler.JobsByNextExecution, Descending: true}, []string{"p4", "p3", "p1", "p5", "p2"}},
		{"name desc", scheduler.ListJobsOptions{Descending: true}, []string{"p5", "p4", "p3", "p2", "p1"}},
		{"name", scheduler.ListJobsOptions{}, []string{"p1", "p2", "p3", "p4", "p5"}},
		// No job has run: all tie, in name order.
		{"properties/status/lastExecutionTime desc", scheduler.ListJobsOptions{OrderBy: scheduler.JobsByLastExecution, Descending: true}, []string{"p5", "p4", "p3", "p2", "p1"}},
		{"failureCount", scheduler.ListJobsOptions{OrderBy: scheduler.JobsByFailures}, []string{"p1", "p2", "p3", "p4", "p5"}},
	} {
		got, err := c.ListJobs(ctx, listRef, &httpapi.ListOptions{OrderBy: tt.orderBy})
		if err != nil {
			t.Errorf("ListJobs($orderby=%s): %v", tt.orderBy, err)
			continue
		}
		if diff := cmp.Diff(tt.want, jobNames(got)); diff != "" {
			t.Errorf("ListJobs($orderby=%s) (-want +got):\n%s", tt.orderBy, diff)
		}
		goList, err := s.ListJobs(ctx, "sub1/rg/jc", &tt.opts)
		if err != nil {
			t.Fatal(err)
		}
		var goNames []string
		for _, j := range goList {
			goNames = append(goNames, j.Name)
		}
		if diff := cmp.Diff(goNames, jobNames(got)); diff != "" {
			t.Errorf("ListJobs($orderby=%s) differs from the Go API's ListJobs(%+v) (-Go +REST):\n%s", tt.orderBy, tt.opts, diff)
		}
	}

	// Pages follow one another in the order asked for: nextLink keeps
	// $orderby, and a filter combines with it.
	page, err := c.ListJobs(ctx, listRef, &httpapi.ListOptions{OrderBy: "nextExecutionTime desc", Filter: "state eq Enabled", Top: 2})
	if err != nil {
		t.Fatal(err)
	}
	pages := [][]string{jobNames(page)}
	for i := 0; page.NextLink != nil && i < 5; i++ {
		if u, err := url.Parse(*page.NextLink); err != nil || u.Query().Get("$orderby") != "nextExecutionTime desc" {
			t.Errorf("nextLink %s does not keep $orderby (%v)", *page.NextLink, err)
		}
		page = getJobPage(t, *page.NextLink)
		pages = append(pages, jobNames(page))
	}
	if diff := cmp.Diff([][]string{{"p3", "p1"}, {"p5", "p2"}}, pages); diff != "" {
		t.Errorf("pages of the Enabled jobs by next execution, descending, 2 a page (-want +got):\n%s", diff)
	}
}

// getJobPage reads the page of jobs at link, a nextLink.
func getJobPage(t *testing.T, link string) *httpapi.JobListResult {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, link, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", link, resp.Status)
	}
	var page httpapi.JobListResult
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		t.Fatal(err)
	}
	return &page
}

// TestListOrderByRefused: an $orderby the list cannot apply is a 400 at
// $orderby whose message names the $orderby and the part at fault; the
// history, newest first, takes none.
func TestListOrderByRefused(t *testing.T) {
	c, _ := clientOnIdle(t)
	putOrderJobs(t, c)
	ctx := context.Background()
	for _, tt := range []struct {
		history bool
		orderBy string
		part    string
	}{
		{false, "properties/state", "properties/state is not a member to order by"},
		{false, "properties/status/nextExecutionTime descending", "its direction descending"},
		{false, "nextExecutionTime desc, name", "one member only"},
		{false, "name asc desc", "one member only"},
		{false, "properties.status.failureCount", "properties.status.failureCount is not a member"},
		{true, "name", "newest first"},
	} {
		var err error
		opts := &httpapi.ListOptions{OrderBy: tt.orderBy}
		if tt.history {
			_, err = c.ListHistory(ctx, listRef, "p1", opts)
		} else {
			_, err = c.ListJobs(ctx, listRef, opts)
		}
		var re *httpapi.ResponseError
		if !errors.As(err, &re) || re.StatusCode != http.StatusBadRequest || re.Detail.Target != "$orderby" ||
			!strings.Contains(re.Detail.Message, "'"+tt.orderBy+"'") || !strings.Contains(re.Detail.Message, tt.part) {
			t.Errorf("$orderby=%s: %v, want a 400 at $orderby naming the $orderby and saying %q", tt.orderBy, err, tt.part)
		}
	}
	// With a bad $filter too, both are reported.
	_, err := c.ListJobs(ctx, listRef, &httpapi.ListOptions{OrderBy: "size", Filter: "state eq Sleeping"})
	var re *httpapi.ResponseError
	if !errors.As(err, &re) || len(re.Detail.Details) != 2 || re.Detail.Details[0].Target != "$filter" || re.Detail.Details[1].Target != "$orderby" {
		t.Errorf("bad $filter and $orderby: %v, want a 400 with a detail for each", err)
	}
}
