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

	"github.com/google/go-cmp/cmp"

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
		{"in another case of member and spelling, keeps its spelling", `{"Location": "westeurope", "properties": {}}`, "", "West Europe"},
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
	if got := location(); got != "West Europe" {
		t.Errorf("after refused PUTs: location %q, want West Europe", got)
	}
}

// TestPutCollectionLocationSpelling: a PUT that gives a collection its
// location in another spelling ("westeurope" for "West Europe") is no
// change of location: the collection keeps its spelling, in the answer
// and stored.
func TestPutCollectionLocationSpelling(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewServer(e.open)
	defer srv.Close()
	const url = "/subscriptions/sub1/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/jc1" + v
	put := func(location string) string {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPut, srv.URL+url, strings.NewReader(`{"location": "`+location+`", "properties": {}}`))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var col httpapi.JobCollectionDefinition
		if err := json.NewDecoder(res.Body).Decode(&col); err != nil || res.StatusCode/100 != 2 {
			t.Fatalf("PUT location %q: %d, %v", location, res.StatusCode, err)
		}
		return col.Location
	}
	put("West Europe")
	c := httpapi.NewClient(srv.URL, nil)
	for _, l := range []string{"westeurope", "West Europe", "WESTEUROPE"} {
		if got := put(l); got != "West Europe" {
			t.Errorf("PUT location %q: answers location %q, want West Europe", l, got)
		}
		col, err := c.GetCollection(context.Background(), httpapi.CollectionRef{Subscription: "sub1", ResourceGroup: "rg1", Collection: "jc1"})
		if err != nil {
			t.Fatal(err)
		}
		if col.Location != "West Europe" {
			t.Errorf("PUT location %q: stored location %q, want West Europe", l, col.Location)
		}
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

// jcNew is the path of a collection that newSeeingScheduler does not make.
const jcNew = rg1 + "/jc-new"

// TestPutCollectionLocationChange: a PUT that gives an existing
// collection another location is refused as ARM refuses it, 409
// InvalidResourceLocation at location, and changes nothing; the same
// location in another spelling is no change.
func TestPutCollectionLocationChange(t *testing.T) {
	s, _ := newSeeingScheduler(t, memory.New(), nil)
	h := httpapi.New(s, nil)
	if rec := serveWith(h, "PUT", jcNew+v, `{"location": "West Europe", "properties": {}}`, nil); rec.Code != http.StatusCreated {
		t.Fatalf("create = %d %s, want 201", rec.Code, rec.Body)
	}
	refusesLocationChange(t, s, h, "PUT", `{"location": "North Europe", "tags": {"a": "b"}, "properties": {}}`)
	if rec := serveWith(h, "PUT", jcNew+v, `{"location": "westeurope", "properties": {}}`, nil); rec.Code != http.StatusOK {
		t.Errorf("PUT with the location in another spelling = %d %s, want 200", rec.Code, rec.Body)
	}
}

// TestPutCollectionIfNoneMatch: a collection PUT with If-None-Match: *
// creates the collection, and leaves one that exists as it is, answering
// 412, as for jobs; another If-None-Match value is 400.
func TestPutCollectionIfNoneMatch(t *testing.T) {
	s, _ := newSeeingScheduler(t, memory.New(), nil)
	h := httpapi.New(s, nil)
	star := map[string]string{"If-None-Match": "*"}
	if rec := serveWith(h, "PUT", jcNew+v, `{"location": "West Europe", "properties": {}}`, star); rec.Code != http.StatusCreated {
		t.Fatalf("PUT of a new collection with If-None-Match: * = %d %s, want 201", rec.Code, rec.Body)
	}
	before, err := s.GetCollection(context.Background(), "sub1/rg1/jc-new")
	if err != nil {
		t.Fatal(err)
	}
	rec := serveWith(h, "PUT", jcNew+v, `{"location": "West Europe", "properties": {"sku": {"name": "Free"}}}`, star)
	if e := decodeError(t, rec); rec.Code != http.StatusPreconditionFailed || e.Code != httpapi.CodePreconditionFailed || e.Target != "If-None-Match" {
		t.Errorf("PUT of an existing collection with If-None-Match: * = %d %+v, want 412 PreconditionFailed at If-None-Match", rec.Code, e)
	}
	after, err := s.GetCollection(context.Background(), "sub1/rg1/jc-new")
	if err != nil {
		t.Fatal(err)
	}
	if after.ETag != before.ETag || after.Version != before.Version {
		t.Errorf("collection after the refused PUT has ETag %q, version %d; want %q, %d", after.ETag, after.Version, before.ETag, before.Version)
	}
	if rec := serveWith(h, "PUT", jcNew+v, `{"properties": {}}`, map[string]string{"If-None-Match": `"abc"`}); rec.Code != http.StatusBadRequest {
		t.Errorf(`PUT with If-None-Match: "abc" = %d %s, want 400`, rec.Code, rec.Body)
	}
}

// TestPatchCollectionLocationChange: a PATCH that gives an existing
// collection another location is refused as a PUT is, 409
// InvalidResourceLocation at location, and changes nothing; the same
// location in another spelling, and a patch without a location, apply.
func TestPatchCollectionLocationChange(t *testing.T) {
	s, _ := newSeeingScheduler(t, memory.New(), nil)
	h := httpapi.New(s, nil)
	if rec := serveWith(h, "PUT", jcNew+v, `{"location": "West Europe", "properties": {}}`, nil); rec.Code != http.StatusCreated {
		t.Fatalf("create = %d %s, want 201", rec.Code, rec.Body)
	}
	refusesLocationChange(t, s, h, "PATCH", `{"location": "North Europe", "tags": {"a": "b"}}`)
	for _, body := range []string{`{"location": "westeurope", "tags": {"a": "b"}}`, `{"tags": {"c": "d"}}`, `{"location": null, "tags": {"e": "f"}}`} {
		if rec := serveWith(h, "PATCH", jcNew+v, body, nil); rec.Code != http.StatusOK {
			t.Errorf("PATCH %s = %d %s, want 200", body, rec.Code, rec.Body)
		}
	}
	if rec := serveWith(h, "PATCH", rg1+"/jc-none"+v, `{"location": "West Europe"}`, nil); rec.Code != http.StatusNotFound {
		t.Errorf("PATCH of a collection that does not exist = %d %s, want 404", rec.Code, rec.Body)
	}
}

// refusesLocationChange sends method with body, which gives collection
// jc-new (in West Europe, without tags) the location North Europe, and
// checks that it is refused as ARM refuses it, 409 InvalidResourceLocation
// at location, and that the collection stays as it was.
func refusesLocationChange(t *testing.T, s *scheduler.Scheduler, h http.Handler, method, body string) {
	t.Helper()
	before, err := s.GetCollection(context.Background(), "sub1/rg1/jc-new")
	if err != nil {
		t.Fatal(err)
	}
	rec := serveWith(h, method, jcNew+v, body, nil)
	want := httpapi.ErrorDetail{Code: httpapi.CodeInvalidResourceLocation, Target: "location",
		Message: "The resource 'jc-new' already exists in location 'West Europe' in resource group 'rg1'. A resource with the same name cannot be created in location 'North Europe'. Please select a new resource name."}
	if rec.Code != http.StatusConflict {
		t.Errorf("%s with another location = %d, want 409", method, rec.Code)
	}
	if diff := cmp.Diff(want, decodeError(t, rec)); diff != "" {
		t.Errorf("%s with another location: error (-want +got):\n%s", method, diff)
	}
	after, err := s.GetCollection(context.Background(), "sub1/rg1/jc-new")
	if err != nil {
		t.Fatal(err)
	}
	if after.ETag != before.ETag || after.Definition.Location != "West Europe" || len(after.Definition.Tags) != 0 {
		t.Errorf("after the refused %s: ETag %q, location %q, tags %v; want it unchanged", method, after.ETag, after.Definition.Location, after.Definition.Tags)
	}
}

// TestPatchCollectionLocationSpelling: a PATCH that gives a collection its
// location in another spelling keeps the spelling it has, and applies the
// rest of the patch.
func TestPatchCollectionLocationSpelling(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewServer(e.open)
	defer srv.Close()
	const url = "/subscriptions/sub1/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/jc1" + v
	send := func(method, body string) *httpapi.JobCollectionDefinition {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+url, strings.NewReader(body))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var col httpapi.JobCollectionDefinition
		if err := json.NewDecoder(res.Body).Decode(&col); err != nil || res.StatusCode/100 != 2 {
			t.Fatalf("%s %s: %d, %v", method, body, res.StatusCode, err)
		}
		return &col
	}
	send(http.MethodPut, `{"location": "West Europe", "properties": {}}`)
	for _, body := range []string{`{"Location": "westeurope", "tags": {"a": "b"}}`, `{ "location" : "WEST EUROPE" , "properties": {"state": "Suspended"}}`} {
		col := send(http.MethodPatch, body)
		if col.Location != "West Europe" {
			t.Errorf("PATCH %s: location %q, want West Europe", body, col.Location)
		}
	}
	col := send(http.MethodGet, "")
	if col.Location != "West Europe" || col.Tags["a"] != "b" || col.Properties.State != "Suspended" {
		t.Errorf("after the patches: location %q, tags %v, state %s; want West Europe, a: b, Suspended", col.Location, col.Tags, col.Properties.State)
	}
}
