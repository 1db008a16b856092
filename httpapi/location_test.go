package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/httpapi"
	"github.com/jobclock/scheduler/store/memory"
)

// TestPutCollectionKeepsLocation: a collection PUT without location (or
// with null) keeps the location the collection has, with If-Match as
// before; one with a location sets it.
func TestPutCollectionKeepsLocation(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewServer(e.open)
	defer srv.Close()
	ctx := context.Background()
	c := httpapi.NewClient(srv.URL, nil)
	ref := httpapi.CollectionRef{Subscription: "sub1", ResourceGroup: "rg1", Collection: "jc1"}
	const jc = "/subscriptions/sub1/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/"
	putTo := func(name, body string, ifMatch string) (*httpapi.JobCollectionDefinition, int) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPut, srv.URL+jc+name+v, strings.NewReader(body))
		if ifMatch != "" {
			req.Header.Set("If-Match", ifMatch)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		col := new(httpapi.JobCollectionDefinition)
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode/100 == 2 {
			if err := json.Unmarshal(b, col); err != nil {
				t.Fatal(err)
			}
		} else {
			t.Logf("PUT %s: %d %s", name, res.StatusCode, b)
		}
		return col, res.StatusCode
	}
	put := func(body, ifMatch string) (*httpapi.JobCollectionDefinition, int) { return putTo("jc1", body, ifMatch) }
	location := func() string {
		t.Helper()
		col, err := c.GetCollection(ctx, ref)
		if err != nil {
			t.Fatal(err)
		}
		return col.Location
	}

	if _, code := put(`{"properties": {}}`, ""); code != http.StatusCreated {
		t.Fatalf("create: %d", code)
	}
	if got := location(); got != "" {
		t.Errorf("created without location: location %q, want none", got)
	}
	steps := []struct {
		name, body, ifMatch string
		want                string
	}{
		{"a location sets it", `{"location": "West Europe", "properties": {}}`, "", "West Europe"},
		{"none keeps it", `{"properties": {"sku": {"name": "Free"}}}`, "", "West Europe"},
		{"null keeps it", `{"location": null, "tags": {"a": "b"}, "properties": {}}`, "", "West Europe"},
		{"none with If-Match * keeps it", `{"properties": {}}`, "*", "West Europe"},
		{"none with the current ETag keeps it", `{"properties": {}}`, "current", "West Europe"},
		{"in another case of member", `{"Location": "North Europe", "properties": {}}`, "", "North Europe"},
	}
	for _, tt := range steps {
		ifMatch := tt.ifMatch
		if ifMatch == "current" {
			cur, err := c.GetCollection(ctx, ref)
			if err != nil {
				t.Fatal(err)
			}
			ifMatch = `"` + cur.ETag + `"`
		}
		col, code := put(tt.body, ifMatch)
		if code != http.StatusOK {
			t.Fatalf("%s: %d, want 200", tt.name, code)
		}
		if col.Location != tt.want {
			t.Errorf("%s: response location %q, want %q", tt.name, col.Location, tt.want)
		}
		if got := location(); got != tt.want {
			t.Errorf("%s: stored location %q, want %q", tt.name, got, tt.want)
		}
	}
	// The rest of the body still replaces: the Free plan and the tags
	// given above are gone.
	col, err := c.GetCollection(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if col.Properties.SKU.Name != "Standard" || len(col.Tags) != 0 {
		t.Errorf("after the last PUT: plan %v, tags %v; want Standard, none", col.Properties.SKU.Name, col.Tags)
	}
	// A stale If-Match is refused as before, and so is If-Match * of a
	// collection that does not exist.
	if _, code := put(`{"properties": {}}`, `"stale"`); code != http.StatusPreconditionFailed {
		t.Errorf("stale If-Match: %d, want 412", code)
	}
	if _, code := putTo("nope", `{"properties": {}}`, "*"); code != http.StatusPreconditionFailed {
		t.Errorf("If-Match * of a missing collection: %d, want 412", code)
	}
	if got := location(); got != "North Europe" {
		t.Errorf("after refused PUTs: location %q, want North Europe", got)
	}
}

// racingStore writes the collection once more, with another location,
// just after the first read that follows race being set: a write that
// lands between the handler's read of the location and its own write.
type racingStore struct {
	*memory.Store
	race atomic.Bool
}

func (s *racingStore) GetCollection(ctx context.Context, name string) (*scheduler.CollectionRecord, error) {
	r, err := s.Store.GetCollection(ctx, name)
	if err == nil && s.race.CompareAndSwap(true, false) {
		w := *r
		w.Definition.Location = "Japan East"
		w.ETag = "raced"
		if err := s.Store.PutCollection(ctx, &w); err != nil {
			return nil, err
		}
	}
	return r, err
}

// TestPutCollectionKeepsLocationRace: when another write changes the
// collection between the read of its location and the PUT's write, the
// PUT answers 409 and writes nothing, instead of putting back the location
// it read.
func TestPutCollectionKeepsLocationRace(t *testing.T) {
	st := &racingStore{Store: memory.New()}
	s, err := scheduler.New(st, &scheduler.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(httpapi.New(s, &httpapi.Options{Logger: slog.New(slog.DiscardHandler)}))
	defer srv.Close()
	const path = "/subscriptions/sub1/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/jc1"
	put := func(body string) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPut, srv.URL+path+v, strings.NewReader(body))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if code := put(`{"location": "West Europe", "properties": {}}`); code != http.StatusCreated {
		t.Fatalf("create: %d", code)
	}
	st.race.Store(true)
	if code := put(`{"tags": {"a": "b"}, "properties": {}}`); code != http.StatusConflict {
		t.Errorf("PUT raced by another write = %d, want 409", code)
	}
	c, err := s.GetCollection(context.Background(), "sub1/rg1/jc1")
	if err != nil {
		t.Fatal(err)
	}
	if c.Definition.Location != "Japan East" || len(c.Definition.Tags) != 0 {
		t.Errorf("after the raced PUT: location %q, tags %v; want the other write's, Japan East without tags", c.Definition.Location, c.Definition.Tags)
	}
}
