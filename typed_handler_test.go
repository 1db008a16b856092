package scheduler_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/httpapi"
	"github.com/jobclock/scheduler/store/memory"
)

// Digest is the payload of the Digest action type in these tests.
type Digest struct {
	To    string   `json:"to"`
	Teams []string `json:"teams,omitempty"`
	Limit int      `json:"limit,omitempty"`
}

// digests registers a typed handler for Digest that records its payloads.
type digests struct {
	mu  sync.Mutex
	got []Digest
	h   *action.Handler[Digest]
}

func newDigests(reg *action.Registry) *digests {
	d := &digests{}
	d.h = action.Handle(reg, "Digest", func(ctx context.Context, req *action.Request, p Digest) error {
		d.mu.Lock()
		defer d.mu.Unlock()
		d.got = append(d.got, p)
		return nil
	})
	return d
}

func (d *digests) payloads() []Digest {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]Digest(nil), d.got...)
}

func paths(err error) []string {
	var out []string
	for _, e := range scheduler.ValidationErrors(err) {
		out = append(out, e.Error())
	}
	return out
}

// TestTypedHandlerOneRegistration: registering a typed handler once makes
// its type accepted, and its payload checked strictly at put time, for
// definitions written in Go, in JSON (the Scheduler's ParseJob), in a
// PatchJob and through the REST API.
func TestTypedHandlerOneRegistration(t *testing.T) {
	ctx := context.Background()
	reg := new(action.Registry)
	d := newDigests(reg)
	s, err := scheduler.New(memory.New(), &scheduler.Config{Executors: reg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutCollection(ctx, "c", nil, nil); err != nil {
		t.Fatal(err)
	}

	// Go.
	r, err := s.PutJob(ctx, "c", "go", &scheduler.Job{Action: d.h.Action(Digest{To: "go", Teams: []string{"a"}})}, nil)
	if err != nil {
		t.Fatalf("PutJob of a typed Go payload: %v", err)
	}
	if got := string(r.Job.Action.Custom); got != `{"to":"go","teams":["a"]}` {
		t.Errorf("stored action: custom %s; want the payload encoded into custom", got)
	}
	_, err = s.PutJob(ctx, "c", "go-bad", &scheduler.Job{Action: action.Action{Type: "Digest", Custom: []byte(`{"to": 1, "team": "a"}`)},
		State: scheduler.JobDisabled}, nil)
	if diff := cmp.Diff([]string{`action.custom.team: unknown field, did you mean "teams"?`, "action.custom.to: 1 is not a string"}, paths(err)); diff != "" {
		t.Errorf("PutJob of a bad Go payload: errors (-want +got):\n%s", diff)
	}
	_, err = s.PutJob(ctx, "c", "go-error-action", &scheduler.Job{Action: action.Action{Type: "Http",
		Request:     &action.HTTPRequest{URI: "http://127.0.0.1:9/", Method: "GET"},
		ErrorAction: new(d.h.Action(Digest{Limit: 1}))}}, nil)
	if err != nil {
		t.Errorf("PutJob with a typed error action: %v", err)
	}
	_, err = s.PutJob(ctx, "c", "go-error-action", &scheduler.Job{Action: action.Action{Type: "Http",
		Request:     &action.HTTPRequest{URI: "http://127.0.0.1:9/", Method: "GET"},
		ErrorAction: &action.Action{Type: "Digest", Custom: []byte(`{"limit": "ten"}`)}}}, nil)
	if diff := cmp.Diff([]string{`action.errorAction.custom.limit: "ten" is not an integer`}, paths(err)); diff != "" {
		t.Errorf("PutJob with a bad typed error action: errors (-want +got):\n%s", diff)
	}

	// JSON, through the Scheduler's ParseJob: the registered type in any
	// case, without a second list of types.
	def, err := s.ParseJob([]byte(`{"action": {"type": "digest", "custom": {"to": "json"}}, "state": "Disabled"}`))
	if err != nil {
		t.Fatalf("Scheduler.ParseJob: %v", err)
	}
	if def.Action.Type != "Digest" {
		t.Errorf("parsed type %q, want the registered spelling Digest", def.Action.Type)
	}
	if _, err := s.PutJob(ctx, "c", "json", def, nil); err != nil {
		t.Fatalf("PutJob of a parsed definition: %v", err)
	}
	_, err = s.ParseJob([]byte(`{"properties": {"action": {"type": "Digest", "custom": {"to": ["x"], "limit": 1.5}}}}`))
	want := []string{`properties.action.custom.limit: 1.5 is not an integer`, `properties.action.custom.to: ["x"] is not a string`}
	if diff := cmp.Diff(want, paths(err)); diff != "" {
		t.Errorf("Scheduler.ParseJob of a bad payload: errors (-want +got):\n%s", diff)
	}
	// A definition parsed without the Scheduler is checked when put.
	loose, err := scheduler.ParseJob([]byte(`{"action": {"type": "Digest", "custom": {"to": 5}}}`), &scheduler.ParseOptions{ActionTypes: []action.Type{"Digest"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.PutJob(ctx, "c", "loose", loose, nil)
	if diff := cmp.Diff([]string{"action.custom.to: 5 is not a string"}, paths(err)); diff != "" {
		t.Errorf("PutJob of a bad parsed payload: errors (-want +got):\n%s", diff)
	}

	// PatchJob.
	_, err = s.PatchJob(ctx, "c", "json", []byte(`{"action": {"custom": {"to": "json", "limit": -1, "extra": true}}}`), nil)
	if diff := cmp.Diff([]string{"action.custom.extra: unknown field"}, paths(err)); diff != "" {
		t.Errorf("PatchJob with a bad payload: errors (-want +got):\n%s", diff)
	}
	r, err = s.PatchJob(ctx, "c", "json", []byte(`{"action": {"custom": {"teams": ["b"]}}}`), nil)
	if err != nil {
		t.Fatalf("PatchJob: %v", err)
	}
	if got := string(r.Job.Action.Custom); got != `{"teams":["b"],"to":"json"}` {
		t.Errorf("patched custom = %s", got)
	}

	// REST.
	srv := httptest.NewServer(httpapi.New(s, &httpapi.Options{Logger: slog.New(slog.DiscardHandler)}))
	defer srv.Close()
	url := srv.URL + "/subscriptions/s1/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/c1"
	put := func(path, body string) (int, string) {
		req, _ := http.NewRequest("PUT", url+path+"?api-version=2016-03-01", bytes.NewBufferString(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := put("", `{"location": "West Europe", "properties": {}}`); code != http.StatusCreated {
		t.Fatalf("PUT collection = %d %s", code, body)
	}
	if code, body := put("/jobs/rest", `{"properties": {"action": {"type": "Digest", "custom": {"to": "rest"}}, "state": "Disabled"}}`); code != http.StatusCreated {
		t.Errorf("PUT job of a registered type = %d %s, want 201", code, body)
	}
	code, body := put("/jobs/rest-bad", `{"properties": {"action": {"type": "Digest", "custom": {"to": "rest", "limt": 3}}}}`)
	var armErr struct {
		Error struct {
			Code, Target string
		}
	}
	json.Unmarshal([]byte(body), &armErr)
	if code != http.StatusBadRequest || armErr.Error.Target != "properties.action.custom.limt" {
		t.Errorf("PUT job with a bad payload = %d %s, want 400 at properties.action.custom.limt", code, body)
	}
}

// TestTypedHandlerReceivesPayload runs jobs of a typed handler, defined in
// Go and in JSON, and checks that each attempt got exactly its payload.
func TestTypedHandlerReceivesPayload(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		reg := new(action.Registry)
		d := newDigests(reg)
		s, err := scheduler.New(memory.New(), &scheduler.Config{Executors: reg, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutCollection(ctx, "c", nil, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer s.Stop(ctx)
		if _, err := s.PutJob(ctx, "c", "go", &scheduler.Job{Action: d.h.Action(Digest{To: "go", Teams: []string{"a", "b"}, Limit: 3})}, nil); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		def, err := s.ParseJob([]byte(`{"action": {"type": "Digest", "custom": {"TO": "json"}}, "startTime": "2000-01-01T00:01:00Z"}`))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutJob(ctx, "c", "json", def, nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		want := []Digest{{To: "go", Teams: []string{"a", "b"}, Limit: 3}, {To: "json"}}
		if diff := cmp.Diff(want, d.payloads()); diff != "" {
			t.Errorf("payloads received (-want +got):\n%s", diff)
		}
		for _, name := range []string{"go", "json"} {
			if r, err := s.GetJob(ctx, "c", name); err != nil || r.State != scheduler.JobCompleted {
				t.Errorf("job %s = %v, %v; want Completed", name, r, err)
			}
		}
	})
}

// TestTypedHandlerPayloadOfOldDefinition: a stored payload with a member
// the handler's type no longer has still runs.
func TestTypedHandlerPayloadOfOldDefinition(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		st := memory.New()
		old := new(action.Registry)
		old.Register("Digest", action.ExecutorFunc(func(context.Context, *action.Request) (*action.Result, error) { return nil, nil }))
		s1, err := scheduler.New(st, &scheduler.Config{Executors: old, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		s1.PutCollection(ctx, "c", nil, nil)
		if _, err := s1.PutJob(ctx, "c", "j", &scheduler.Job{Action: action.Action{Type: "Digest", Custom: []byte(`{"to": "x", "removed": 1}`)}}, nil); err != nil {
			t.Fatal(err)
		}
		reg := new(action.Registry)
		d := newDigests(reg)
		s2, err := scheduler.New(st, &scheduler.Config{Executors: reg, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		if err := s2.Start(ctx); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		s2.Stop(ctx)
		if diff := cmp.Diff([]Digest{{To: "x"}}, d.payloads()); diff != "" {
			t.Errorf("payloads (-want +got):\n%s", diff)
		}
		if _, err := s2.GetJob(ctx, "c", "j"); !errors.Is(err, scheduler.ErrStopped) {
			t.Errorf("GetJob after Stop = %v", err)
		}
	})
}
