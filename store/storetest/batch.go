package storetest

import (
	"fmt"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
)

// RunBatchRecorder checks [scheduler.BatchRecorder.RecordBatch] on stores
// made by newStore, which must implement it: each element succeeds or
// fails on its own, with Record's errors, in order.
func RunBatchRecorder(t *testing.T, newStore func(t *testing.T) scheduler.Store) {
	t.Run("Mixed", func(t *testing.T) { batchMixed(t, newStore(t)) })
	t.Run("SameJobTwice", func(t *testing.T) { batchSameJobTwice(t, newStore(t)) })
	t.Run("AllRecorded", func(t *testing.T) { batchAllRecorded(t, newStore(t)) })
	t.Run("KeepDefinition", func(t *testing.T) { batchKeepDefinition(t, newStore(t)) })
	t.Run("AfterRecreate", func(t *testing.T) { batchAfterRecreate(t, newStore(t), false) })
	t.Run("AfterRecreateAtOneInstant", func(t *testing.T) { batchAfterRecreate(t, newStore(t), true) })
}

// answers reads what RecordBatch returned for a batch of n elements as the
// Scheduler does: nil says that every element was recorded; otherwise it
// must hold one error per element.
func answers(t *testing.T, errs []error, n int) []error {
	t.Helper()
	return oneEach(t, "RecordBatch", errs, n)
}

// oneEach reads what a call of op returned for n elements: nil says that
// every element succeeded; otherwise it must hold one error per element.
func oneEach(t *testing.T, op string, errs []error, n int) []error {
	t.Helper()
	if errs == nil {
		return make([]error, n)
	}
	if len(errs) != n {
		t.Fatalf("%s returned %d errors for %d elements, want nil or %d", op, len(errs), n, n)
	}
	return errs
}

func batchRecorder(t *testing.T, s scheduler.Store) scheduler.BatchRecorder {
	t.Helper()
	br, ok := s.(scheduler.BatchRecorder)
	if !ok {
		t.Fatalf("%T does not implement scheduler.BatchRecorder", s)
	}
	return br
}

func batchMixed(t *testing.T, s scheduler.Store) {
	br := batchRecorder(t, s)
	if errs := br.RecordBatch(ctx, "me", nil); len(errs) != 0 {
		t.Errorf("RecordBatch(empty) = %v, want no errors", errs)
	}
	putCollection(t, s, "c", 0)
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		putJob(t, s, "c", n, t0)
	}
	claimed, err := s.ClaimDue(ctx, t0, "me", t0.Add(time.Minute), 10)
	if err != nil || len(claimed) != 5 {
		t.Fatalf("ClaimDue = %v, %v; want 5 jobs", names(claimed), err)
	}
	byName := map[string]*scheduler.JobRecord{}
	for _, j := range claimed {
		byName[j.Name] = j
	}
	// b: taken over by another owner after the lease ended.
	if got, _ := s.ClaimDue(ctx, t0.Add(time.Minute), "other", t0.Add(time.Hour), 10); len(got) != 5 {
		t.Fatalf("takeover ClaimDue = %v, want all 5", names(got))
	}
	for _, n := range []string{"a", "c", "d", "e"} {
		cur, _ := s.GetJob(ctx, "c", n)
		if err := s.Record(ctx, "other", cur, nil); err != nil {
			t.Fatal(err)
		}
		got, _ := s.ClaimDue(ctx, t0.Add(time.Minute), "me", t0.Add(2*time.Hour), 1)
		if len(got) != 1 || got[0].Name != n {
			t.Fatalf("re-claim of %s = %v", n, names(got))
		}
		byName[n] = got[0]
	}
	// c: stale version; d: deleted.
	stale := byName["c"].Clone()
	stale.Version--
	if err := s.DeleteJob(ctx, "c", "d", ""); err != nil {
		t.Fatal(err)
	}
	hist := func(n string, k int) []scheduler.HistoryEntry {
		var h []scheduler.HistoryEntry
		for i := 1; i <= k; i++ {
			e := entry(i, scheduler.StatusCompleted, t0.Add(time.Duration(i)*time.Second))
			e.Job, e.Message = n, fmt.Sprintf("%s%d", n, i)
			h = append(h, e)
		}
		return h
	}
	done := func(j *scheduler.JobRecord) *scheduler.JobRecord {
		j.Status.ExecutionCount = 1
		j.Schedule.DueAt = t0.Add(time.Hour)
		return j
	}
	batch := []scheduler.RecordRequest{
		{Job: done(byName["a"]), History: hist("a", 2)},
		{Job: byName["b"].Clone(), History: hist("b", 1)},
		{Job: stale, History: hist("c", 1)},
		{Job: byName["d"], History: hist("d", 1)},
		{Job: done(byName["e"]), History: hist("e", 3)},
	}
	wantVersion := map[string]int64{"a": byName["a"].Version + 1, "e": byName["e"].Version + 1}
	errs := br.RecordBatch(ctx, "me", batch)
	if len(errs) != len(batch) {
		t.Fatalf("RecordBatch returned %d errors for %d elements", len(errs), len(batch))
	}
	for i, want := range []error{nil, scheduler.ErrLeaseLost, scheduler.ErrConflict, scheduler.ErrNotFound, nil} {
		if want == nil {
			if errs[i] != nil {
				t.Errorf("RecordBatch element %d (%s): %v, want success", i, batch[i].Job.Name, errs[i])
			}
			continue
		}
		wantErr(t, fmt.Sprintf("RecordBatch element %d (%s)", i, batch[i].Job.Name), errs[i], want)
	}
	for n, v := range wantVersion {
		j, _ := s.GetJob(ctx, "c", n)
		h, _ := s.ListHistory(ctx, "c", n, scheduler.HistoryFilter{})
		if j.Version != v || j.LeaseOwner != "" || j.Status.ExecutionCount != 1 || !j.Schedule.DueAt.Equal(t0.Add(time.Hour)) {
			t.Errorf("%s after RecordBatch: version %d owner %q count %d due %v; want %d, none, 1, %v", n, j.Version, j.LeaseOwner,
				j.Status.ExecutionCount, j.Schedule.DueAt, v, t0.Add(time.Hour))
		}
		want := map[string][]string{"a": {"a2", "a1"}, "e": {"e3", "e2", "e1"}}[n]
		if !equal(messages(h), want) {
			t.Errorf("history of %s after RecordBatch = %v, want %v", n, messages(h), want)
		}
	}
	for n, owner := range map[string]string{"b": "other", "c": "me"} {
		j, _ := s.GetJob(ctx, "c", n)
		h, _ := s.ListHistory(ctx, "c", n, scheduler.HistoryFilter{})
		if j.LeaseOwner != owner || j.Status.ExecutionCount != 0 || len(h) != 0 {
			t.Errorf("%s after a failed element: owner %q count %d history %v; want %s, 0, none", n, j.LeaseOwner, j.Status.ExecutionCount, messages(h), owner)
		}
	}
}

func batchSameJobTwice(t *testing.T, s scheduler.Store) {
	br := batchRecorder(t, s)
	putCollection(t, s, "c", 0)
	putJob(t, s, "c", "j", t0)
	claimed, err := s.ClaimDue(ctx, t0, "me", t0.Add(time.Minute), 1)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("ClaimDue = %v, %v", names(claimed), err)
	}
	first, second := claimed[0], claimed[0].Clone()
	errs := br.RecordBatch(ctx, "me", []scheduler.RecordRequest{
		{Job: first, History: []scheduler.HistoryEntry{entry(1, scheduler.StatusCompleted, t0)}},
		{Job: second, History: []scheduler.HistoryEntry{entry(2, scheduler.StatusCompleted, t0)}},
	})
	if errs[0] != nil {
		t.Errorf("first element: %v", errs[0])
	}
	wantErr(t, "second element for the same job (lease released by the first)", errs[1], scheduler.ErrLeaseLost)
	h, _ := s.ListHistory(ctx, "c", "j", scheduler.HistoryFilter{})
	if !equal(messages(h), []string{"1"}) {
		t.Errorf("history = %v, want [1]", messages(h))
	}
}

// batchAllRecorded: a batch whose elements all succeed is answered with nil
// or with one nil error per element, and stores every one of them.
func batchAllRecorded(t *testing.T, s scheduler.Store) {
	br := batchRecorder(t, s)
	putCollection(t, s, "c", 0)
	for _, n := range []string{"a", "b", "c"} {
		putJob(t, s, "c", n, t0)
	}
	claimed, err := s.ClaimDue(ctx, t0, "me", t0.Add(time.Minute), 10)
	if err != nil || len(claimed) != 3 {
		t.Fatalf("ClaimDue = %v, %v; want 3 jobs", names(claimed), err)
	}
	var batch []scheduler.RecordRequest
	want := map[string]int64{}
	for i, j := range claimed {
		j.Status.ExecutionCount = i + 1
		j.Schedule.DueAt = t0.Add(time.Hour)
		want[j.Name] = j.Version + 1
		batch = append(batch, scheduler.RecordRequest{Job: j, History: []scheduler.HistoryEntry{entry(1, scheduler.StatusCompleted, t0)}})
	}
	count := map[string]int{}
	for _, b := range batch {
		count[b.Job.Name] = b.Job.Status.ExecutionCount
	}
	for i, err := range answers(t, br.RecordBatch(ctx, "me", batch), len(batch)) {
		if err != nil {
			t.Errorf("RecordBatch element %d: %v, want success", i, err)
		}
	}
	for n, v := range want {
		j, err := s.GetJob(ctx, "c", n)
		if err != nil {
			t.Fatalf("GetJob(%s) after RecordBatch: %v", n, err)
		}
		h, _ := s.ListHistory(ctx, "c", n, scheduler.HistoryFilter{})
		if j.Version != v || j.LeaseOwner != "" || j.Status.ExecutionCount != count[n] || len(h) != 1 {
			t.Errorf("%s after RecordBatch: version %d owner %q count %d, %d history entries; want %d, none, %d, 1",
				n, j.Version, j.LeaseOwner, j.Status.ExecutionCount, len(h), v, count[n])
		}
	}
}

// batchKeepDefinition: an element with KeepDefinition keeps the stored
// definition whatever its record holds (another definition, or none) and
// writes the rest of the record; an element without it writes the
// definition it holds; a stale element with it changes nothing.
func batchKeepDefinition(t *testing.T, s scheduler.Store) {
	br := batchRecorder(t, s)
	putCollection(t, s, "c", 0)
	jobs := []string{"changed", "kept", "none", "stale"}
	for _, n := range jobs {
		putJob(t, s, "c", n, t0)
	}
	claimed, err := s.ClaimDue(ctx, t0, "me", t0.Add(time.Minute), 10)
	if err != nil || len(claimed) != len(jobs) {
		t.Fatalf("ClaimDue = %v, %v; want %d jobs", names(claimed), err, len(jobs))
	}
	byName := map[string]*scheduler.JobRecord{}
	for _, j := range claimed {
		byName[j.Name] = j
	}
	const otherURI = "http://127.0.0.1/other"
	other := func() *scheduler.Job {
		return &scheduler.Job{Action: action.Action{Type: action.HTTP, Request: &action.HTTPRequest{URI: otherURI, Method: "POST"}}}
	}
	version := map[string]int64{}
	for _, n := range jobs {
		j := byName[n]
		version[n] = j.Version
		j.Status.ExecutionCount = 1
		j.Schedule.DueAt = t0.Add(time.Hour)
		j.Job = other()
	}
	byName["none"].Job = nil
	byName["stale"].Version--
	hist := []scheduler.HistoryEntry{entry(1, scheduler.StatusCompleted, t0)}
	batch := []scheduler.RecordRequest{
		{Job: byName["changed"], History: hist},
		{Job: byName["kept"], History: hist, KeepDefinition: true},
		{Job: byName["none"], History: hist, KeepDefinition: true},
		{Job: byName["stale"], History: hist, KeepDefinition: true},
	}
	errs := br.RecordBatch(ctx, "me", batch)
	if len(errs) != len(batch) {
		t.Fatalf("RecordBatch returned %d errors for %d elements (one fails)", len(errs), len(batch))
	}
	for i, e := range errs[:3] {
		if e != nil {
			t.Errorf("RecordBatch element %d (%s): %v, want success", i, jobs[i], e)
		}
	}
	wantErr(t, "RecordBatch element 3 (stale, KeepDefinition)", errs[3], scheduler.ErrConflict)
	want := map[string]struct {
		uri, method string
		version     int64
		count       int
	}{
		"changed": {otherURI, "POST", version["changed"] + 1, 1},
		"kept":    {"http://127.0.0.1/", "GET", version["kept"] + 1, 1},
		"none":    {"http://127.0.0.1/", "GET", version["none"] + 1, 1},
		"stale":   {"http://127.0.0.1/", "GET", version["stale"], 0},
	}
	for _, n := range jobs {
		w := want[n]
		j, err := s.GetJob(ctx, "c", n)
		if err != nil {
			t.Fatalf("GetJob(%s) after RecordBatch: %v", n, err)
		}
		var uri, method string
		if j.Job != nil && j.Job.Action.Request != nil {
			uri, method = j.Job.Action.Request.URI, j.Job.Action.Request.Method
		}
		if uri != w.uri || method != w.method || j.Version != w.version || j.Status.ExecutionCount != w.count {
			t.Errorf("%s after RecordBatch: request %s %s, version %d, count %d; want %s %s, %d, %d",
				n, method, uri, j.Version, j.Status.ExecutionCount, w.method, w.uri, w.version, w.count)
		}
	}
}

// batchAfterRecreate is testRecordAfterRecreate for RecordBatch, with and
// without KeepDefinition; atOnce is claimRecreated's.
func batchAfterRecreate(t *testing.T, s scheduler.Store, atOnce bool) {
	br := batchRecorder(t, s)
	old, fresh := claimRecreated(t, s, atOnce)
	for _, keep := range []bool{true, false} {
		r := old.Clone()
		r.Status.ExecutionCount = 7
		r.Schedule.DueAt = t0.Add(time.Hour)
		h := scheduler.HistoryEntry{Collection: "c", Job: "j", ActionName: scheduler.MainAction, Status: scheduler.StatusCompleted,
			ExpectedExecutionTime: t0, StartTime: t0, EndTime: t0.Add(time.Second), RepeatCount: 1, Message: "old"}
		errs := answers(t, br.RecordBatch(ctx, "me", []scheduler.RecordRequest{{Job: r, History: []scheduler.HistoryEntry{h}, KeepDefinition: keep}}), 1)
		wantErr(t, fmt.Sprintf("RecordBatch(claim of the deleted job, KeepDefinition %v)", keep), errs[0], scheduler.ErrNotFound)
		wantUntouched(t, s, fresh)
	}
	if errs := br.RecordBatch(ctx, "me", []scheduler.RecordRequest{{Job: fresh}}); errs != nil && errs[0] != nil {
		t.Errorf("RecordBatch(claim of the new job): %v", errs[0])
	}
}
