package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

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
