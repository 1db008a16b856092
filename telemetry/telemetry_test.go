package telemetry_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/store/memory"
	"github.com/jobclock/scheduler/telemetry"
)

// otelEnv is an OpenTelemetry SDK with in-memory exporters: a span
// recorder and a manual metric reader.
type otelEnv struct {
	spans  *tracetest.SpanRecorder
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
}

func newOtel() *otelEnv {
	o := &otelEnv{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	o.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(o.spans))
	o.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(o.reader))
	return o
}

// config adds to cfg an Observer with the providers and the other options
// of opts, if given.
func (o *otelEnv) config(cfg scheduler.Config, opts ...telemetry.Options) scheduler.Config {
	var to telemetry.Options
	if len(opts) > 0 {
		to = opts[0]
	}
	to.TracerProvider, to.MeterProvider = o.tp, o.mp
	cfg.Observer = telemetry.New(&to)
	return cfg
}

// span is the part of a recorded span that tests compare.
type span struct {
	Name   string
	Kind   trace.SpanKind
	Start  time.Duration // from t0
	End    time.Duration
	Attrs  map[string]any
	Status codes.Code
	Desc   string
}

func attrMap(kvs []attribute.KeyValue) map[string]any {
	m := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.AsInterface()
	}
	return m
}

// ended returns the ended spans named name (all when name is empty), in the
// order they started.
func (o *otelEnv) ended(name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range o.spans.Ended() {
		if name == "" || s.Name() == name {
			out = append(out, s)
		}
	}
	// By start, then by name: spans that start at the same instant on
	// different goroutines end in either order.
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if !a.StartTime().Equal(b.StartTime()) {
			return a.StartTime().Before(b.StartTime())
		}
		return a.Name() < b.Name()
	})
	return out
}

func (o *otelEnv) spanRows(name string, t0 time.Time) []span {
	var out []span
	for _, s := range o.ended(name) {
		out = append(out, span{s.Name(), s.SpanKind(), s.StartTime().Sub(t0), s.EndTime().Sub(t0), attrMap(s.Attributes()), s.Status().Code, s.Status().Description})
	}
	return out
}

// point is one data point of a metric: its attributes as "k=v,..." and its
// value (a number, or count and sum for a histogram).
type point struct {
	Attrs string
	Value float64
	Count uint64
	Sum   float64
}

// metrics collects every metric, by name.
func (o *otelEnv) metrics(t *testing.T) map[string][]point {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := o.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatalf("collect metrics: %v", err)
	}
	out := map[string][]point{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			var ps []point
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					ps = append(ps, point{Attrs: setString(p.Attributes), Value: float64(p.Value)})
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					ps = append(ps, point{Attrs: setString(p.Attributes), Value: float64(p.Value)})
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					ps = append(ps, point{Attrs: setString(p.Attributes), Count: p.Count, Sum: p.Sum})
				}
			default:
				t.Fatalf("metric %s has unexpected data %T", m.Name, m.Data)
			}
			sort.Slice(ps, func(i, j int) bool { return ps[i].Attrs < ps[j].Attrs })
			out[m.Name] = ps
		}
	}
	return out
}

func setString(s attribute.Set) string {
	var parts []string
	for _, kv := range s.ToSlice() {
		parts = append(parts, string(kv.Key)+"="+kv.Value.String())
	}
	return strings.Join(parts, ",")
}

// pick returns the named metrics of all, for comparison.
func pick(all map[string][]point, names ...string) map[string][]point {
	out := map[string][]point{}
	for _, n := range names {
		out[n] = all[n]
	}
	return out
}

var attemptMetrics = []string{"jobclock.occurrences.started", "jobclock.occurrences.faulted", "jobclock.attempts", "jobclock.attempt.duration",
	"jobclock.occurrence.lateness", "jobclock.occurrences.missed", "jobclock.lease.takeovers"}

func rfc(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// attemptAttrs are the attributes of an attempt span.
func attemptAttrs(job string, typ action.Type, name scheduler.ActionName, occurrence, retry int, expected time.Time, lateness time.Duration, tag, outcome string) map[string]any {
	return map[string]any{
		"jobclock.collection": "c", "jobclock.job": job, "jobclock.action.type": string(typ),
		"jobclock.action.name": string(name), "jobclock.occurrence.number": int64(occurrence),
		"jobclock.attempt.retry": int64(retry), "jobclock.occurrence.expected_time": rfc(expected),
		"jobclock.attempt.lateness": lateness.Seconds(), "jobclock.execution_tag": tag,
		"jobclock.instance": "a", "jobclock.attempt.outcome": outcome,
	}
}

func TestTelemetrySuccess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := newOtel()
		e := newEnv(t, o.config(scheduler.Config{InstanceID: "a"}))
		e.exec.fn = func(req *action.Request, n int) error {
			time.Sleep(1500 * time.Millisecond)
			return nil
		}
		e.start()
		e.put("j", jobJSON(e.t0.Add(time.Minute), ""))
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		e.stop()
		h := e.history("j")
		if len(h) != 1 {
			t.Fatalf("history = %+v, want one entry", h)
		}
		m := time.Minute
		want := []span{{
			Name: "jobclock.attempt", Kind: trace.SpanKindInternal, Start: m, End: m + 1500*time.Millisecond,
			Attrs: attemptAttrs("j", action.HTTP, scheduler.MainAction, 1, 0, e.t0.Add(m), 0, h[0].ExecutionTag, "Completed"),
		}}
		if diff := cmp.Diff(want, o.spanRows("", e.t0)); diff != "" {
			t.Errorf("spans (-want +got):\n%s", diff)
		}
		wantMetrics := map[string][]point{
			"jobclock.occurrences.started": {{Attrs: "jobclock.action.type=Http", Value: 1}},
			"jobclock.occurrences.faulted": nil,
			"jobclock.attempts":            {{Attrs: "jobclock.action.name=MainAction,jobclock.action.type=Http,jobclock.attempt.outcome=Completed", Value: 1}},
			"jobclock.attempt.duration":    {{Attrs: "jobclock.action.name=MainAction,jobclock.action.type=Http,jobclock.attempt.outcome=Completed", Count: 1, Sum: 1.5}},
			"jobclock.occurrence.lateness": {{Attrs: "jobclock.action.type=Http", Count: 1, Sum: 0}},
			"jobclock.occurrences.missed":  nil,
			"jobclock.lease.takeovers":     nil,
		}
		if diff := cmp.Diff(wantMetrics, pick(o.metrics(t), attemptMetrics...)); diff != "" {
			t.Errorf("metrics (-want +got):\n%s", diff)
		}
	})
}

func TestTelemetryRetriesAndErrorAction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := newOtel()
		e := newEnv(t, o.config(scheduler.Config{InstanceID: "a"}))
		e.exec.fn = func(req *action.Request, n int) error {
			time.Sleep(time.Second)
			if req.ErrorAction {
				return nil
			}
			return errors.New("boom")
		}
		e.start()
		e.put("j", `{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/main", "method": "GET"},
			"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT20S", "retryCount": 2},
			"errorAction": {"type": "Https", "request": {"uri": "https://127.0.0.1:9/error", "method": "POST"}}}}`)
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		e.stop()
		tag := e.history("j")[0].ExecutionTag
		s := time.Second
		failed := func(retry int, start time.Duration, lateness time.Duration) span {
			a := attemptAttrs("j", action.HTTP, scheduler.MainAction, 1, retry, e.t0, lateness, tag, "Failed")
			a["error.type"] = "*errors.errorString"
			return span{Name: "jobclock.attempt", Kind: trace.SpanKindInternal, Start: start, End: start + s, Attrs: a, Status: codes.Error, Desc: "boom"}
		}
		want := []span{
			failed(0, 0, 0),
			failed(1, 21*s, 0), // due 20 s after the first ended, started then
			failed(2, 42*s, 0),
			{Name: "jobclock.attempt", Kind: trace.SpanKindInternal, Start: 43 * s, End: 44 * s,
				Attrs: attemptAttrs("j", action.HTTPS, scheduler.ErrorAction, 1, 0, e.t0, 0, tag, "Completed")},
		}
		if diff := cmp.Diff(want, o.spanRows("", e.t0)); diff != "" {
			t.Errorf("spans (-want +got):\n%s", diff)
		}
		// One trace: the retries and the error action are children of the
		// first attempt.
		spans := o.ended("jobclock.attempt")
		first := spans[0].SpanContext()
		if spans[0].Parent().IsValid() {
			t.Errorf("first attempt has parent %v, want a root span", spans[0].Parent())
		}
		for i, sp := range spans[1:] {
			if sp.SpanContext().TraceID() != first.TraceID() || sp.Parent().SpanID() != first.SpanID() {
				t.Errorf("attempt %d: trace %v parent %v; want trace %v, parent %v (the first attempt)",
					i+1, sp.SpanContext().TraceID(), sp.Parent().SpanID(), first.TraceID(), first.SpanID())
			}
		}
		main := "jobclock.action.name=MainAction,jobclock.action.type=Http,"
		errAct := "jobclock.action.name=ErrorAction,jobclock.action.type=Https,"
		wantMetrics := map[string][]point{
			"jobclock.occurrences.started": {{Attrs: "jobclock.action.type=Http", Value: 1}},
			"jobclock.occurrences.faulted": {{Attrs: "jobclock.action.type=Http", Value: 1}},
			"jobclock.attempts": {
				{Attrs: errAct + "jobclock.attempt.outcome=Completed", Value: 1},
				{Attrs: main + "jobclock.attempt.outcome=Failed", Value: 3},
			},
			"jobclock.attempt.duration": {
				{Attrs: errAct + "jobclock.attempt.outcome=Completed", Count: 1, Sum: 1},
				{Attrs: main + "jobclock.attempt.outcome=Failed", Count: 3, Sum: 3},
			},
			"jobclock.occurrence.lateness": {{Attrs: "jobclock.action.type=Http", Count: 1, Sum: 0}},
			"jobclock.occurrences.missed":  nil,
			"jobclock.lease.takeovers":     nil,
		}
		if diff := cmp.Diff(wantMetrics, pick(o.metrics(t), attemptMetrics...)); diff != "" {
			t.Errorf("metrics (-want +got):\n%s", diff)
		}
	})
}

func TestTelemetryPostponed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := newOtel()
		e := newEnv(t, o.config(scheduler.Config{InstanceID: "a", ActionTimeout: 5 * time.Minute}))
		e.exec.fn = func(req *action.Request, n int) error {
			if n == 0 {
				time.Sleep(90 * time.Second)
			}
			return nil
		}
		e.start()
		e.put("j", jobJSON(e.t0, `"recurrence": {"frequency": "Minute", "count": 2}`))
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		e.stop()
		h := e.history("j") // newest first: 2 Completed, 2 Postponed, 1 Completed
		m := time.Minute
		want := []span{
			{Name: "jobclock.attempt", Kind: trace.SpanKindInternal, Start: 0, End: 90 * time.Second,
				Attrs: attemptAttrs("j", action.HTTP, scheduler.MainAction, 1, 0, e.t0, 0, h[2].ExecutionTag, "Completed")},
			// The second occurrence came due at 1m while the first ran,
			// and was postponed then (its entry, found when the first
			// ended, says so); it ran at 1m30s.
			{Name: "jobclock.postpone", Kind: trace.SpanKindInternal, Start: m, End: m, Attrs: map[string]any{
				"jobclock.collection": "c", "jobclock.job": "j", "jobclock.action.type": "Http", "jobclock.occurrence.number": int64(2),
				"jobclock.occurrence.expected_time": rfc(e.t0.Add(m)), "jobclock.instance": "a"}},
			{Name: "jobclock.attempt", Kind: trace.SpanKindInternal, Start: 90 * time.Second, End: 90 * time.Second,
				Attrs: attemptAttrs("j", action.HTTP, scheduler.MainAction, 2, 0, e.t0.Add(m), 30*time.Second, h[0].ExecutionTag, "Completed")},
		}
		if diff := cmp.Diff(want, o.spanRows("", e.t0)); diff != "" {
			t.Errorf("spans (-want +got):\n%s", diff)
		}
		all := "jobclock.action.name=MainAction,jobclock.action.type=Http,jobclock.attempt.outcome="
		wantMetrics := map[string][]point{
			"jobclock.occurrences.started": {{Attrs: "jobclock.action.type=Http", Value: 2}},
			"jobclock.occurrences.faulted": nil,
			"jobclock.attempts":            {{Attrs: all + "Completed", Value: 2}, {Attrs: all + "Postponed", Value: 1}},
			"jobclock.attempt.duration":    {{Attrs: all + "Completed", Count: 2, Sum: 90}},
			"jobclock.occurrence.lateness": {{Attrs: "jobclock.action.type=Http", Count: 2, Sum: 30}},
			"jobclock.occurrences.missed":  nil,
			"jobclock.lease.takeovers":     nil,
		}
		if diff := cmp.Diff(wantMetrics, pick(o.metrics(t), attemptMetrics...)); diff != "" {
			t.Errorf("metrics (-want +got):\n%s", diff)
		}
	})
}

func TestTelemetryMisfireAfterDowntime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := newOtel()
		e := newEnv(t, o.config(scheduler.Config{InstanceID: "a"}))
		e.start()
		m := time.Minute
		e.put("j", jobJSON(e.t0.Add(m), `"recurrence": {"frequency": "Minute"}`))
		time.Sleep(90 * time.Second)
		synctest.Wait()
		e.stop()
		time.Sleep(10 * m) // down from 1m30s to 11m30s
		e.s = e.newScheduler()
		e.start()
		time.Sleep(20 * time.Second)
		synctest.Wait()
		e.stop()
		h := e.history("j") // newest first
		if len(h) != 3 || h[1].Status != scheduler.StatusSkipped {
			t.Fatalf("history = %+v, want two attempts and the Skipped entry of the merged occurrences", h)
		}
		late := attemptAttrs("j", action.HTTP, scheduler.MainAction, 2, 0, e.t0.Add(2*m), 9*m+30*time.Second, h[0].ExecutionTag, "Completed")
		// Due at 2m, ..., 11m: the run at 11m30s stands for 2m, and the
		// other nine are merged into it.
		late["jobclock.occurrence.missed"] = int64(9)
		late["jobclock.misfire.policy"] = "runOnce"
		late["jobclock.misfire.first_expected_time"] = rfc(e.t0.Add(3 * m))
		late["jobclock.misfire.last_expected_time"] = rfc(e.t0.Add(11 * m))
		want := []span{
			{Name: "jobclock.attempt", Kind: trace.SpanKindInternal, Start: m, End: m,
				Attrs: attemptAttrs("j", action.HTTP, scheduler.MainAction, 1, 0, e.t0.Add(m), 0, h[2].ExecutionTag, "Completed")},
			{Name: "jobclock.attempt", Kind: trace.SpanKindInternal, Start: 11*m + 30*time.Second, End: 11*m + 30*time.Second, Attrs: late},
		}
		if diff := cmp.Diff(want, o.spanRows("", e.t0)); diff != "" {
			t.Errorf("spans (-want +got):\n%s", diff)
		}
		all := "jobclock.action.name=MainAction,jobclock.action.type=Http,jobclock.attempt.outcome="
		wantMetrics := map[string][]point{
			"jobclock.occurrences.started": {{Attrs: "jobclock.action.type=Http", Value: 2}},
			"jobclock.occurrences.faulted": nil,
			"jobclock.attempts":            {{Attrs: all + "Completed", Value: 2}},
			"jobclock.attempt.duration":    {{Attrs: all + "Completed", Count: 2, Sum: 0}},
			"jobclock.occurrence.lateness": {{Attrs: "jobclock.action.type=Http", Count: 2, Sum: 570}},
			"jobclock.occurrences.missed":  {{Attrs: "jobclock.misfire.policy=runOnce", Value: 9}},
			"jobclock.lease.takeovers":     nil,
		}
		if diff := cmp.Diff(wantMetrics, pick(o.metrics(t), attemptMetrics...)); diff != "" {
			t.Errorf("metrics (-want +got):\n%s", diff)
		}
	})
}

func TestTelemetryMisfireSkip(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := newOtel()
		e := newEnv(t, o.config(scheduler.Config{InstanceID: "a", Misfire: scheduler.MisfireSkip}))
		m := time.Minute
		e.put("j", jobJSON(e.t0.Add(m), `"recurrence": {"frequency": "Minute", "count": 20}`))
		// No scheduler runs: 1m..5m are missed; 1m..4m are later than
		// Config.MisfireThreshold when found at 5m30s, and 5m runs.
		time.Sleep(5*m + 30*time.Second)
		e.start()
		time.Sleep(10 * time.Second)
		synctest.Wait()
		e.stop()
		want := []span{{Name: "jobclock.misfire", Kind: trace.SpanKindInternal, Start: 5*m + 30*time.Second, End: 5*m + 30*time.Second, Attrs: map[string]any{
			"jobclock.collection": "c", "jobclock.job": "j", "jobclock.misfire.policy": "skip", "jobclock.occurrence.missed": int64(4),
			"jobclock.misfire.first_expected_time": rfc(e.t0.Add(m)), "jobclock.misfire.last_expected_time": rfc(e.t0.Add(4 * m)),
			"jobclock.instance": "a"}}}
		if diff := cmp.Diff(want, o.spanRows("jobclock.misfire", e.t0)); diff != "" {
			t.Errorf("spans (-want +got):\n%s", diff)
		}
		got := o.metrics(t)
		if diff := cmp.Diff([]point{{Attrs: "jobclock.misfire.policy=skip", Value: 4}}, got["jobclock.occurrences.missed"]); diff != "" {
			t.Errorf("jobclock.occurrences.missed (-want +got):\n%s", diff)
		}
		attempts := o.spanRows("jobclock.attempt", e.t0)
		if len(attempts) != 1 || attempts[0].Start != 5*m+30*time.Second || attempts[0].Attrs["jobclock.occurrence.expected_time"] != rfc(e.t0.Add(5*m)) {
			t.Errorf("attempt spans = %+v, want the one of 5m at 5m30s", attempts)
		}
	})
}

// crashable is a store shared by two instances, one of which (a) can be
// cut off: it no longer claims jobs nor extends its leases.
type crashable struct {
	*memory.Store
	mu      sync.Mutex
	crashed bool
}

var errGone = errors.New("instance a lost the store")

func (c *crashable) gone(owner string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.crashed && owner == "a"
}

func (c *crashable) ExtendLease(ctx context.Context, collection, name, owner string, until time.Time) error {
	if c.gone(owner) {
		return errGone
	}
	return c.Store.ExtendLease(ctx, collection, name, owner, until)
}

func (c *crashable) ExtendLeases(ctx context.Context, owner string, until time.Time, jobs []scheduler.JobKey) []error {
	if c.gone(owner) {
		errs := make([]error, len(jobs))
		for i := range errs {
			errs[i] = errGone
		}
		return errs
	}
	return c.Store.ExtendLeases(ctx, owner, until, jobs)
}

func (c *crashable) ClaimDue(ctx context.Context, now time.Time, owner string, leaseUntil time.Time, limit int) ([]*scheduler.JobRecord, error) {
	if c.gone(owner) {
		return nil, errGone
	}
	return c.Store.ClaimDue(ctx, now, owner, leaseUntil, limit)
}

func (c *crashable) ClaimDueBy(ctx context.Context, req scheduler.ClaimRequest) ([]*scheduler.JobRecord, error) {
	if c.gone(req.Owner) {
		return nil, errGone
	}
	return c.Store.ClaimDueBy(ctx, req)
}

func TestTelemetryTakeover(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		oa, ob := newOtel(), newOtel()
		st := &crashable{Store: memory.New()}
		release := make(chan struct{})
		regA, regB := &action.Registry{}, &action.Registry{}
		var startedA sync.WaitGroup
		startedA.Add(1)
		regA.Register(action.HTTP, action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			startedA.Done()
			<-release // a hangs mid-attempt and stops extending its lease
			return nil, nil
		}))
		regB.Register(action.HTTP, action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			time.Sleep(time.Second)
			return nil, nil
		}))
		cfg := func(o *otelEnv, id string, reg *action.Registry) *scheduler.Config {
			c := o.config(scheduler.Config{InstanceID: id, Executors: reg, LeaseDuration: 30 * time.Second,
				ActionTimeout: time.Hour, PollInterval: time.Second, Logger: discard})
			return &c
		}
		a, err := scheduler.New(st, cfg(oa, "a", regA))
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if _, err := a.PutCollection(ctx, "c", nil, nil); err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		job, _ := scheduler.ParseJob([]byte(jobJSON(t0.Add(time.Minute), "")), nil)
		if _, err := a.PutJob(ctx, "c", "j", job, nil); err != nil {
			t.Fatal(err)
		}
		if err := a.Start(ctx); err != nil {
			t.Fatal(err)
		}
		startedA.Wait() // at 1m
		st.mu.Lock()
		st.crashed = true
		st.mu.Unlock()
		b, err := scheduler.New(st, cfg(ob, "b", regB))
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Start(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * time.Minute)
		synctest.Wait()
		close(release)
		if err := b.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		if err := a.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		h, _ := st.ListHistory(ctx, "c", "j", scheduler.HistoryFilter{})
		if len(h) != 1 {
			t.Fatalf("history = %+v, want b's attempt alone (a's outcome is dropped: its lease was taken over)", h)
		}
		// a's lease, taken for 30s, was never extended (a's store
		// calls fail from the crash on), so b claimed the job when it
		// expired: a claimed it ahead, DefaultClaimAhead before 1m, so
		// its lease ended that much before 1m30s.
		m := time.Minute
		expired := m + 30*time.Second - scheduler.DefaultClaimAhead
		b1 := attemptAttrs("j", action.HTTP, scheduler.MainAction, 1, 0, t0.Add(m), expired-m, h[0].ExecutionTag, "Completed")
		b1["jobclock.instance"] = "b"
		b1["jobclock.lease.previous_owner"] = "a"
		want := []span{{Name: "jobclock.attempt", Kind: trace.SpanKindInternal, Start: expired, End: expired + time.Second, Attrs: b1}}
		if diff := cmp.Diff(want, ob.spanRows("", t0)); diff != "" {
			t.Errorf("b's spans (-want +got):\n%s", diff)
		}
		spansA := oa.spanRows("", t0)
		if len(spansA) != 1 || spansA[0].Attrs["jobclock.execution_tag"] != h[0].ExecutionTag || spansA[0].Start != m {
			t.Errorf("a's spans = %+v, want its one attempt at 1m with the same execution tag", spansA)
		}
		gotB := pick(ob.metrics(t), "jobclock.lease.takeovers", "jobclock.attempts")
		wantB := map[string][]point{
			"jobclock.lease.takeovers": {{Value: 1}},
			"jobclock.attempts":        {{Attrs: "jobclock.action.name=MainAction,jobclock.action.type=Http,jobclock.attempt.outcome=Completed", Value: 1}},
		}
		if diff := cmp.Diff(wantB, gotB); diff != "" {
			t.Errorf("b's metrics (-want +got):\n%s", diff)
		}
		gotA := oa.metrics(t)
		wantA := map[string][]point{
			"jobclock.lease.takeovers": nil,
			"jobclock.attempts":        nil, // its attempt's outcome was not recorded
		}
		if diff := cmp.Diff(wantA, pick(gotA, "jobclock.lease.takeovers", "jobclock.attempts")); diff != "" {
			t.Errorf("a's metrics (-want +got):\n%s", diff)
		}
		// a failed to claim and to extend its lease (with ExtendLeases:
		// the memory store has it), then could not record its outcome.
		errs := gotA["jobclock.store.operation.errors"]
		if len(errs) != 3 || errs[0].Attrs != "error.type=_OTHER,jobclock.store.operation=ClaimDue" || errs[0].Value < 1 ||
			errs[1].Attrs != "error.type=_OTHER,jobclock.store.operation=ExtendLeases" || errs[1].Value < 1 ||
			errs[2] != (point{Attrs: "error.type=lease_lost,jobclock.store.operation=RecordBatch", Value: 1}) {
			t.Errorf("a's jobclock.store.operation.errors = %+v, want failed ClaimDue and ExtendLeases calls and one RecordBatch element with lease_lost", errs)
		}
	})
}

// TestTelemetryRunJobContinuesTrace: RunJob called with a span in its
// context yields attempt spans that are its children.
func TestTelemetryRunJobContinuesTrace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := newOtel()
		e := newEnv(t, o.config(scheduler.Config{InstanceID: "a"}))
		e.exec.fn = func(req *action.Request, n int) error {
			if n == 0 {
				return errors.New("boom")
			}
			return nil
		}
		e.start()
		defer e.stop()
		e.put("j", `{"startTime": "`+e.t0.Add(time.Hour).Format(time.RFC3339)+`",
			"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"},
			"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT15S", "retryCount": 1}}}`)
		ctx, caller := o.tp.Tracer("test").Start(context.Background(), "POST /run")
		if _, err := e.s.RunJob(ctx, "c", "j"); err != nil {
			t.Fatal(err)
		}
		caller.End()
		time.Sleep(time.Minute)
		synctest.Wait()
		attempts := o.ended("jobclock.attempt")
		if len(attempts) != 2 {
			t.Fatalf("%d attempt spans, want 2 (a failure and its retry)", len(attempts))
		}
		for i, sp := range attempts {
			if sp.SpanContext().TraceID() != caller.SpanContext().TraceID() || sp.Parent().SpanID() != caller.SpanContext().SpanID() {
				t.Errorf("attempt %d: trace %v parent %v; want the caller's trace %v and span %v",
					i, sp.SpanContext().TraceID(), sp.Parent().SpanID(), caller.SpanContext().TraceID(), caller.SpanContext().SpanID())
			}
			if got := attrMap(sp.Attributes())["jobclock.occurrence.manual"]; got != true {
				t.Errorf("attempt %d: jobclock.occurrence.manual = %v, want true", i, got)
			}
		}
	})
}

// TestTelemetryGauges checks the observable gauges and their cache.
func TestTelemetryGauges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := newOtel()
		e := newEnv(t, o.config(scheduler.Config{InstanceID: "a", MaxConcurrency: 7}, telemetry.Options{StatsMaxAge: time.Minute}))
		e.put("a1", jobJSON(e.t0.Add(-time.Hour), ""))
		e.put("a2", jobJSON(e.t0.Add(time.Hour), `"state": "Disabled"`))
		e.put("a3", jobJSON(time.Time{}, ""))
		gauges := []string{"jobclock.jobs", "jobclock.jobs.due", "jobclock.jobs.health", "jobclock.jobs.in_flight", "jobclock.jobs.in_flight.limit"}
		health := func(ok, skipped, stale, late, failing float64) []point {
			return []point{
				{Attrs: "jobclock.job.health=Failing", Value: failing}, {Attrs: "jobclock.job.health=Late", Value: late},
				{Attrs: "jobclock.job.health=OK", Value: ok}, {Attrs: "jobclock.job.health=Skipped", Value: skipped},
				{Attrs: "jobclock.job.health=Stale", Value: stale},
			}
		}
		want := map[string][]point{
			"jobclock.jobs": {
				{Attrs: "jobclock.collection=c,jobclock.job.state=Disabled", Value: 1},
				{Attrs: "jobclock.collection=c,jobclock.job.state=Enabled", Value: 2},
			},
			"jobclock.jobs.health":          health(3, 0, 0, 0, 0),
			"jobclock.jobs.due":             {{Value: 2}},
			"jobclock.jobs.in_flight":       {{Value: 0}},
			"jobclock.jobs.in_flight.limit": {{Value: 7}},
		}
		if diff := cmp.Diff(want, pick(o.metrics(t), gauges...)); diff != "" {
			t.Errorf("gauges before Start (-want +got):\n%s", diff)
		}
		e.start()
		time.Sleep(time.Second)
		synctest.Wait()
		// Within StatsMaxAge the counts are reused.
		if diff := cmp.Diff(want["jobclock.jobs"], o.metrics(t)["jobclock.jobs"]); diff != "" {
			t.Errorf("jobclock.jobs within StatsMaxAge (-want +got):\n%s", diff)
		}
		time.Sleep(time.Minute)
		want["jobclock.jobs"] = []point{
			{Attrs: "jobclock.collection=c,jobclock.job.state=Completed", Value: 2},
			{Attrs: "jobclock.collection=c,jobclock.job.state=Disabled", Value: 1},
		}
		want["jobclock.jobs.due"] = []point{{Value: 0}}
		want["jobclock.jobs.health"] = health(3, 0, 0, 0, 0)
		if diff := cmp.Diff(want, pick(o.metrics(t), gauges...)); diff != "" {
			t.Errorf("gauges after the jobs ran (-want +got):\n%s", diff)
		}
		e.stop()
		if got := o.metrics(t)["jobclock.jobs"]; len(got) != 0 {
			t.Errorf("jobclock.jobs after Stop = %v, want none (the callback is unregistered)", got)
		}
	})
}

// TestTelemetryStoreOperations checks the store instruments.
func TestTelemetryStoreOperations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := newOtel()
		e := newEnv(t, o.config(scheduler.Config{InstanceID: "a", HistoryPerJob: 1}))
		e.start()
		e.put("j", jobJSON(time.Time{}, `"recurrence": {"frequency": "Minute", "count": 3}`))
		time.Sleep(15 * time.Minute) // three runs, then a prune at 10m keeps one entry
		synctest.Wait()
		e.stop()
		got := o.metrics(t)
		ops := map[string]uint64{}
		for _, p := range got["jobclock.store.operation.duration"] {
			ops[strings.TrimPrefix(p.Attrs, "jobclock.store.operation=")] = p.Count
		}
		for _, op := range []string{"ClaimDue", "NextDue", "RecordBatch", "Prune"} {
			if ops[op] == 0 {
				t.Errorf("no %s in jobclock.store.operation.duration: %v", op, ops)
			}
		}
		if diff := cmp.Diff([]point{{Value: 2}}, got["jobclock.history.pruned"]); diff != "" {
			t.Errorf("jobclock.history.pruned (-want +got):\n%s", diff)
		}
		if len(got["jobclock.store.operation.errors"]) != 0 {
			t.Errorf("jobclock.store.operation.errors = %v, want none", got["jobclock.store.operation.errors"])
		}
	})
}

var discard = slog.New(slog.DiscardHandler)

// TestTelemetryNamesDocumented: every span and metric name is in the
// package documentation (this package's).
func TestTelemetryNamesDocumented(t *testing.T) {
	names := []string{"jobclock.attempt", "jobclock.postpone", "jobclock.misfire"}
	names = append(names, attemptMetrics...)
	names = append(names, "jobclock.attempts.timed_out", "jobclock.attempts.permanent", "jobclock.attempts.retry_after", "jobclock.attempt.retry_after.wait")
	names = append(names, "jobclock.store.operation.duration", "jobclock.store.operation.errors", "jobclock.history.pruned",
		"jobclock.jobs", "jobclock.jobs.due", "jobclock.jobs.health", "jobclock.jobs.in_flight", "jobclock.jobs.in_flight.limit")
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if !strings.Contains(string(doc), n) {
			t.Errorf("%s is not documented in doc.go", n)
		}
	}
}

// TestTelemetryHTTPReceiverJoinsTrace runs a job through the built-in HTTP
// executor against a local server, which sees a traceparent in the
// attempt's trace: the HTTP client span's, a child of the attempt span.
// Its retry joins the same trace.
func TestTelemetryHTTPReceiverJoinsTrace(t *testing.T) {
	var mu sync.Mutex
	var parents []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		parents = append(parents, r.Header.Get("traceparent"))
		n := len(parents)
		mu.Unlock()
		if n == 1 {
			http.Error(w, "try again", http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	o := newOtel()
	done := make(chan scheduler.HistoryEntry, 10)
	cfg := o.config(scheduler.Config{MinRetryInterval: 10 * time.Millisecond, PollInterval: 50 * time.Millisecond,
		Logger: discard, OnHistory: func(h scheduler.HistoryEntry) { done <- h }})
	s, err := scheduler.New(memory.New(), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer s.Stop(ctx)
	if _, err := s.PutCollection(ctx, "web", nil, nil); err != nil {
		t.Fatal(err)
	}
	job, err := scheduler.ParseJob([]byte(`{"action": {"type": "Http",
		"request": {"uri": "`+srv.URL+`/hook?key=k3y", "method": "POST", "headers": {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}},
		"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT0.05S", "retryCount": 1}}}`),
		&scheduler.ParseOptions{MinRetryInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutJob(ctx, "web", "hook", job, nil); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("the job's two attempts did not end within 10s")
		}
	}
	attempts, clients := o.ended("jobclock.attempt"), o.ended("POST")
	if len(attempts) != 2 || len(clients) != 2 || len(parents) != 2 {
		t.Fatalf("%d attempt spans, %d client spans, %d requests; want 2 of each", len(attempts), len(clients), len(parents))
	}
	trace0 := attempts[0].SpanContext().TraceID()
	for i := range 2 {
		a, c := attempts[i], clients[i]
		want := fmt.Sprintf("00-%s-%s-01", trace0, c.SpanContext().SpanID())
		if parents[i] != want {
			t.Errorf("request %d: traceparent %q, want %q (the client span in the attempt's trace)", i, parents[i], want)
		}
		if c.Parent().SpanID() != a.SpanContext().SpanID() || c.SpanKind() != trace.SpanKindClient {
			t.Errorf("client span %d: parent %v kind %v; want the attempt span %v, client", i, c.Parent().SpanID(), c.SpanKind(), a.SpanContext().SpanID())
		}
		if a.SpanContext().TraceID() != trace0 {
			t.Errorf("attempt %d is in trace %v, want %v like the first", i, a.SpanContext().TraceID(), trace0)
		}
	}
	u, _ := url.Parse(srv.URL)
	port, _ := strconv.Atoi(u.Port())
	wantAttrs := map[string]any{
		"http.request.method": "POST", "server.address": "127.0.0.1", "server.port": int64(port), "url.scheme": "http",
		"url.full": srv.URL + "/hook?key=REDACTED", "http.response.status_code": int64(503), "error.type": "503",
	}
	if diff := cmp.Diff(wantAttrs, attrMap(clients[0].Attributes())); diff != "" {
		t.Errorf("first client span's attributes (-want +got):\n%s", diff)
	}
	if clients[0].Status().Code != codes.Error || clients[1].Status().Code != codes.Unset {
		t.Errorf("client span statuses %v, %v; want Error for the 503, Unset for the 200", clients[0].Status(), clients[1].Status())
	}
}

// TestTelemetryNoHistory runs retries, a faulted occurrence with its error
// action, and an occurrence postponed behind a slow one, with history kept
// and with Config.HistoryPerJob NoHistory, and finds the same attempt
// metrics: the Scheduler still makes the entries that the Observer counts.
func TestTelemetryNoHistory(t *testing.T) {
	run := func(t *testing.T, perJob int) (map[string][]point, int) {
		var got map[string][]point
		var stored int
		synctest.Test(t, func(t *testing.T) {
			o := newOtel()
			e := newEnv(t, o.config(scheduler.Config{InstanceID: "a", HistoryPerJob: perJob, ActionTimeout: 2 * time.Minute}))
			e.exec.fn = func(req *action.Request, n int) error {
				switch {
				case strings.HasSuffix(req.Action.Request.URI, "/slow"):
					time.Sleep(90 * time.Second)
				case strings.HasSuffix(req.Action.Request.URI, "/main"):
					return errors.New("boom")
				}
				return nil
			}
			e.start()
			e.put("j", `{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/main", "method": "GET"},
				"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT20S", "retryCount": 2},
				"errorAction": {"type": "Https", "request": {"uri": "https://127.0.0.1:9/error", "method": "POST"}}}}`)
			e.put("slow", jobJSON(e.t0.Add(time.Minute), `"recurrence": {"frequency": "Minute", "count": 3},
				"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/slow", "method": "GET"}}`))
			time.Sleep(10 * time.Minute)
			synctest.Wait()
			e.stop()
			got = pick(o.metrics(t), attemptMetrics...)
			stored = len(e.history("j")) + len(e.history("slow"))
		})
		return got, stored
	}
	want, stored := run(t, 0)
	if len(want["jobclock.attempts"]) != 4 || stored == 0 { // main Failed, error Completed, slow Completed and Postponed
		t.Fatalf("with history: attempts %v, %d entries stored; want four series and some entries", want["jobclock.attempts"], stored)
	}
	got, stored := run(t, scheduler.NoHistory)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("metrics with NoHistory (-with history +without):\n%s", diff)
	}
	if stored != 0 {
		t.Errorf("with NoHistory: %d history entries stored, want none", stored)
	}
}
