package httpapi_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	httpaction "github.com/jobclock/scheduler/action/http"
	"github.com/jobclock/scheduler/httpapi"
	"github.com/jobclock/scheduler/store/memory"
	"github.com/jobclock/scheduler/store/sqlite"
)

// handlerTransport sends a Client's requests to a handler in the same
// process, without a network (so that a Client works in a synctest
// bubble).
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}

// historyEnv is a started Scheduler, in a synctest bubble, over a store of
// the kind asked for, with collection sub1/rg1/jc1 limited to one attempt
// at once per host, whose HTTP actions are answered by a fake: URIs ending
// in /slow take 10s, those ending in /fail get 503 Service Unavailable,
// others succeed at once. It has the jobs of historyJobs, which have run.
type historyEnv struct {
	s   *scheduler.Scheduler
	h   http.Handler
	c   *httpapi.Client
	ref httpapi.CollectionRef
}

// historyJobs are the jobs of historyEnv: two that call the same host at
// once (one waits for the other, by the collection's limit), one whose
// attempts fail with an HTTP status and whose occurrence faults (then its
// errorAction runs), one run now beside its schedule and one whose
// occurrences missed while it was paused are skipped.
var historyJobs = []string{"slow-a", "slow-b", "faulted", "manual", "skipped"}

func newHistoryEnv(t *testing.T, kind string) *historyEnv {
	t.Helper()
	var st scheduler.Store = memory.New()
	if kind == "sqlite" {
		sq, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "jobs.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sq.Close() })
		st = sq
	}
	reg := new(action.Registry)
	fake := action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
		uri := req.Action.Request.URI
		switch {
		case strings.HasSuffix(uri, "/slow"):
			time.Sleep(10 * time.Second)
		case strings.HasSuffix(uri, "/fail"):
			return &action.Result{Message: "Failed: 503 Service Unavailable"},
				&httpaction.StatusError{Host: "other.example", StatusCode: 503, Status: "Service Unavailable"}
		}
		return &action.Result{Message: "Completed: 200 OK"}, nil
	})
	reg.Register(action.HTTP, fake)
	log := slog.New(slog.DiscardHandler)
	s, err := scheduler.New(st, &scheduler.Config{Executors: reg, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := s.PutCollection(ctx, "sub1/rg1/jc1", &scheduler.JobCollection{Properties: scheduler.CollectionProperties{
		Limits: []scheduler.Limit{{Key: scheduler.LimitHost, MaxConcurrent: 1}}}}, nil); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	defs := map[string]string{
		"slow-a": `{"action": {"type": "Http", "request": {"uri": "http://limited.example/slow", "method": "GET"}}}`,
		"slow-b": `{"action": {"type": "Http", "request": {"uri": "http://limited.example/slow", "method": "GET"}}}`,
		"faulted": `{"action": {"type": "Http", "request": {"uri": "http://other.example/fail", "method": "GET"},
			"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT30S", "retryCount": 1},
			"errorAction": {"type": "Http", "request": {"uri": "http://other.example/dead-letter", "method": "POST"}}}}`,
		"manual": `{"action": {"type": "Http", "request": {"uri": "http://other.example/ok", "method": "GET"}},
			"startTime": "` + now.Add(24*time.Hour).Format(time.RFC3339) + `", "recurrence": {"frequency": "Day"}}`,
		"skipped": `{"action": {"type": "Http", "request": {"uri": "http://other.example/ok", "method": "GET"}},
			"startTime": "` + now.Format(time.RFC3339) + `", "recurrence": {"frequency": "Minute", "interval": 5},
			"state": "Disabled", "resumeTime": "` + now.Add(30*time.Minute).Format(time.RFC3339) + `",
			"runPolicy": {"missed": "Skip", "catchUpWindow": "PT1S"}}`,
	}
	for _, name := range historyJobs {
		def, err := scheduler.ParseJob([]byte(defs[name]), nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := s.PutJob(ctx, "sub1/rg1/jc1", name, def, nil); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop(context.Background()) })
	if _, err := s.RunJob(ctx, "sub1/rg1/jc1", "manual"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Hour)
	synctest.Wait()
	h := httpapi.New(s, &httpapi.Options{Logger: log})
	return &historyEnv{s: s, h: h, ref: httpapi.CollectionRef{Subscription: "sub1", ResourceGroup: "rg1", Collection: "jc1"},
		c: httpapi.NewClient("http://jobclock.example", &httpapi.ClientOptions{HTTPClient: &http.Client{Transport: handlerTransport{h}}})}
}

// restHistory returns the body of GET .../jobs/{job}/history with query
// (after api-version), decoded, and fails the test unless it is 200.
func (e *historyEnv) restHistory(t *testing.T, job, query string) map[string]any {
	t.Helper()
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, httptest.NewRequest("GET", jc1+"/jobs/"+job+"/history"+v+query, nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET history of %s%s: %d %s", job, query, rec.Code, rec.Body)
	}
	var body map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	return body
}

// goProperties returns what the REST properties of the Go API's entries
// should be, member by member: each entry's JSON, whose members have the
// REST names, but for collection and job, which the resource's id and
// name say; message is there when empty too, as in Azure's entries.
func goProperties(t *testing.T, hist []scheduler.HistoryEntry) []any {
	t.Helper()
	out := []any{}
	for _, h := range hist {
		b, err := json.Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "collection")
		delete(m, "job")
		if _, ok := m["message"]; !ok {
			m["message"] = ""
		}
		out = append(out, m)
	}
	return out
}

// restProperties returns the properties of the entries of a REST history
// body.
func restProperties(body map[string]any) []any {
	out := []any{}
	values, _ := body["value"].([]any)
	for _, v := range values {
		out = append(out, v.(map[string]any)["properties"])
	}
	return out
}

// TestHistoryMembers: the REST history of a job has, in every entry, the
// members of the Go API's entry (but collection and job, which its id
// says) with the same values, on memory and SQLite: the wait for a
// collection's limit, the HTTP status and faulted mark of failed
// attempts, the manual mark of a run now, the count and last expected time
// of skipped occurrences, and the execution tag of every attempt; the
// filters "faulted eq true", "faulted eq false" and conditions joined by
// "and" keep the entries that ListHistoryOptions' Faulted, NotFaulted and
// Status keep; and the Client's ListHistory reads all of them.
func TestHistoryMembers(t *testing.T) {
	for _, kind := range []string{"memory", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newHistoryEnv(t, kind)
				ctx := t.Context()
				seen := map[string]bool{}
				for _, job := range historyJobs {
					hist, err := e.s.ListHistory(ctx, "sub1/rg1/jc1", job, nil)
					if err != nil {
						t.Fatal(err)
					}
					for _, h := range hist {
						seen["executionTag"] = seen["executionTag"] || h.ExecutionTag != ""
						seen["limitWaitMs"] = seen["limitWaitMs"] || h.LimitWaitMillis > 0
						seen["httpStatus"] = seen["httpStatus"] || h.HTTPStatus != 0
						seen["faulted"] = seen["faulted"] || h.Faulted
						seen["manual"] = seen["manual"] || h.Manual
						seen["lastExpectedTime"] = seen["lastExpectedTime"] || !h.LastExpectedTime.IsZero()
					}
					body := e.restHistory(t, job, "")
					if diff := cmp.Diff(goProperties(t, hist), restProperties(body)); diff != "" {
						t.Errorf("%s: REST history properties differ from the Go API's entries (-Go +REST):\n%s", job, diff)
					}
					// Each $filter lists what the Go API lists with the
					// options it stands for, conditions joined by "and".
					for _, f := range []struct {
						filter string
						opts   scheduler.ListHistoryOptions
					}{
						{"faulted eq true", scheduler.ListHistoryOptions{Faulted: true}},
						{"faulted eq false", scheduler.ListHistoryOptions{NotFaulted: true}},
						{"status eq Failed and faulted eq false", scheduler.ListHistoryOptions{Status: scheduler.StatusFailed, NotFaulted: true}},
						{"Faulted eq 'TRUE' AND status eq 'failed'", scheduler.ListHistoryOptions{Status: scheduler.StatusFailed, Faulted: true}},
					} {
						want, err := e.s.ListHistory(ctx, "sub1/rg1/jc1", job, &f.opts)
						if err != nil {
							t.Fatal(err)
						}
						seen[f.filter] = seen[f.filter] || len(want) > 0
						filtered := e.restHistory(t, job, "&$filter="+urlq(f.filter))
						if diff := cmp.Diff(goProperties(t, want), restProperties(filtered)); diff != "" {
							t.Errorf("%s: REST history with %s differs from the Go API's entries with %+v (-Go +REST):\n%s", job, f.filter, f.opts, diff)
						}
					}
					// The Client's type reads every member: written
					// again, it is the body it read.
					list, err := e.c.ListHistory(ctx, e.ref, job, nil)
					if err != nil {
						t.Fatal(err)
					}
					b, err := json.Marshal(list)
					if err != nil {
						t.Fatal(err)
					}
					var read map[string]any
					if err := json.Unmarshal(b, &read); err != nil {
						t.Fatal(err)
					}
					if diff := cmp.Diff(body, read); diff != "" {
						t.Errorf("%s: the Client's ListHistory differs from the body it read (-body +Client):\n%s", job, diff)
					}
				}
				// The jobs make entries with every member the test is
				// about: without them, it would check nothing.
				for _, m := range []string{"executionTag", "limitWaitMs", "httpStatus", "faulted", "manual", "lastExpectedTime"} {
					if !seen[m] {
						t.Errorf("no history entry of the jobs has %s", m)
					}
				}
				for _, f := range []string{"faulted eq true", "faulted eq false", "status eq Failed and faulted eq false", "Faulted eq 'TRUE' AND status eq 'failed'"} {
					if !seen[f] {
						t.Errorf("no history entry of the jobs passes the $filter %s", f)
					}
				}
			})
		})
	}
}
