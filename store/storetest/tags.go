package storetest

import (
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
)

// testJobTags checks that a store keeps a job's tags: PutJob stores and
// replaces them, reads and claims return them, Record keeps the stored
// ones whatever its record holds, and ListJobs filters on one of them.
func testJobTags(t *testing.T, s scheduler.Store) {
	putCollection(t, s, "c", 0)
	putCollection(t, s, "other", 0)
	put := func(coll, name string, state scheduler.JobState, tags map[string]string) {
		t.Helper()
		j := newJob(coll, name, time.Time{})
		j.State, j.Tags = state, tags
		if err := s.PutJob(ctx, j); err != nil {
			t.Fatalf("PutJob(%s/%s): %v", coll, name, err)
		}
	}
	put("c", "a", scheduler.JobEnabled, map[string]string{"team": "ops", "tier": "1"})
	put("c", "b", scheduler.JobDisabled, map[string]string{"team": "web"})
	put("c", "c", scheduler.JobEnabled, nil)
	put("c", "d", scheduler.JobEnabled, map[string]string{"team": "ops", "tier": ""})
	put("c", "e", scheduler.JobDisabled, map[string]string{"team": "ops", "name with 'quotes' and \"ü\"": "a, \"b\""})
	put("other", "a", scheduler.JobEnabled, map[string]string{"team": "ops"})

	got, err := s.GetJob(ctx, "c", "e")
	if err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff(map[string]string{"team": "ops", "name with 'quotes' and \"ü\"": "a, \"b\""}, got.Tags); diff != "" {
		t.Errorf("GetJob(c/e).Tags (-want +got):\n%s", diff)
	}
	if got, _ := s.GetJob(ctx, "c", "c"); got.Tags != nil {
		t.Errorf("GetJob(c/c).Tags = %#v, want nil for a job without tags", got.Tags)
	}
	for _, tc := range []struct {
		name string
		f    scheduler.JobFilter
		want []string
	}{
		{"name", scheduler.JobFilter{Tag: scheduler.TagFilter{Name: "team"}}, []string{"c/a", "c/b", "c/d", "c/e"}},
		{"name and value", scheduler.JobFilter{Tag: scheduler.TagFilter{Name: "team", Value: "ops"}}, []string{"c/a", "c/d", "c/e"}},
		{"an empty value", scheduler.JobFilter{Tag: scheduler.TagFilter{Name: "tier"}}, []string{"c/a", "c/d"}},
		{"another value", scheduler.JobFilter{Tag: scheduler.TagFilter{Name: "tier", Value: "2"}}, nil},
		{"names compared exactly", scheduler.JobFilter{Tag: scheduler.TagFilter{Name: "TEAM"}}, nil},
		{"values compared exactly", scheduler.JobFilter{Tag: scheduler.TagFilter{Name: "team", Value: "OPS"}}, nil},
		{"a name with quotes", scheduler.JobFilter{Tag: scheduler.TagFilter{Name: "name with 'quotes' and \"ü\"", Value: "a, \"b\""}}, []string{"c/e"}},
		{"and a state", scheduler.JobFilter{State: scheduler.JobDisabled, Tag: scheduler.TagFilter{Name: "team", Value: "ops"}}, []string{"c/e"}},
		{"a page", scheduler.JobFilter{Tag: scheduler.TagFilter{Name: "team", Value: "ops"}, Skip: 1, Top: 1}, []string{"c/d"}},
	} {
		list, err := s.ListJobs(ctx, "c", tc.f)
		if err != nil {
			t.Fatalf("%s: ListJobs: %v", tc.name, err)
		}
		if diff := gocmp.Diff(tc.want, names(list)); diff != "" {
			t.Errorf("%s: ListJobs(%+v) (-want +got):\n%s", tc.name, tc.f, diff)
		}
	}

	// A replace stores the tags given: other ones, then none.
	j, _ := s.GetJob(ctx, "c", "a")
	j.Tags = map[string]string{"team": "db"}
	if err := s.PutJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetJob(ctx, "c", "a"); !gocmp.Equal(got.Tags, map[string]string{"team": "db"}) {
		t.Errorf("after a replace with other tags: %v", got.Tags)
	}
	j, _ = s.GetJob(ctx, "c", "d")
	j.Tags = nil
	if err := s.PutJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetJob(ctx, "c", "d"); got.Tags != nil {
		t.Errorf("after a replace without tags: %v", got.Tags)
	}

	// A claim returns the tags; Record keeps the stored ones.
	j, _ = s.GetJob(ctx, "c", "a")
	j.Schedule.DueAt = t0
	if err := s.PutJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	claimed, err := s.ClaimDue(ctx, t0, "me", t0.Add(time.Minute), 10)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("ClaimDue = %v, %v; want c/a", names(claimed), err)
	}
	if !gocmp.Equal(claimed[0].Tags, map[string]string{"team": "db"}) {
		t.Errorf("ClaimDue returned tags %v, want team=db", claimed[0].Tags)
	}
	claimed[0].Tags = map[string]string{"changed": "by the record"}
	claimed[0].Schedule.DueAt = time.Time{}
	if err := s.Record(ctx, "me", claimed[0], nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetJob(ctx, "c", "a"); !gocmp.Equal(got.Tags, map[string]string{"team": "db"}) {
		t.Errorf("after Record with other tags: %v, want the stored team=db", got.Tags)
	}
}

// CheckMigratedJob checks a job that a store kept from before its schema
// had tags, for a backend's migration tests: job collection/name reads back
// without tags, and may be given some and found by them.
func CheckMigratedJob(t *testing.T, s scheduler.Store, collection, name string) {
	t.Helper()
	old, err := s.GetJob(ctx, collection, name)
	if err != nil || old.Tags != nil {
		t.Fatalf("GetJob after migration = tags %v, %v; want none", old.Tags, err)
	}
	old.Tags = map[string]string{"team": "ops"}
	if err := s.PutJob(ctx, old); err != nil {
		t.Fatal(err)
	}
	list, err := s.ListJobs(ctx, collection, scheduler.JobFilter{Tag: scheduler.TagFilter{Name: "team", Value: "ops"}})
	if err != nil || len(list) != 1 || list[0].Tags["team"] != "ops" {
		t.Errorf("ListJobs(team=ops) after migration = %v, %v; want the job with its tag", names(list), err)
	}
}
