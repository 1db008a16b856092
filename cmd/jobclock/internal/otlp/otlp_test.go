package otlp_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/jobclock/scheduler/cmd/jobclock/internal/otlp"
	"github.com/jobclock/scheduler/cmd/jobclock/internal/otlp/otlptest"
)

// collector starts a loopback OTLP/HTTP receiver and returns it with the
// Config of a signal that sends to it.
func collector(t *testing.T, signal string) (*otlptest.Collector, otlp.Config) {
	t.Helper()
	c := &otlptest.Collector{}
	srv := httptest.NewServer(c)
	t.Cleanup(srv.Close)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	cfg, err := otlp.ConfigFromEnv(signal)
	if err != nil {
		t.Fatal(err)
	}
	return c, cfg
}

var testResource = resource.NewWithAttributes("https://opentelemetry.io/schemas/1.37.0",
	attribute.String("service.name", "jobclock"), attribute.String("service.instance.id", "i-1"))

func str(s string) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: s}}
}

func kv(k string, v *commonpb.AnyValue) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: v}
}

// attrs returns a decoded attribute list by key.
func attrs(kvs []*commonpb.KeyValue) map[string]*commonpb.AnyValue {
	m := map[string]*commonpb.AnyValue{}
	for _, kv := range kvs {
		m[kv.GetKey()] = kv.GetValue()
	}
	return m
}

// TestExportMetrics sends the metrics of an SDK meter through a periodic
// reader and decodes them with the OTLP definitions: resource, scope, a
// counter with attributes of each type, a histogram and a gauge.
func TestExportMetrics(t *testing.T) {
	ctx := context.Background()
	col, cfg := collector(t, "METRICS")
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithResource(testResource),
		sdkmetric.WithReader(sdkmetric.NewPeriodicReader(otlp.NewMetricExporter(cfg), sdkmetric.WithInterval(time.Hour))))
	defer mp.Shutdown(ctx)
	m := mp.Meter("github.com/jobclock/scheduler", metric.WithInstrumentationVersion("v1.2.3"))
	before := time.Now()
	attempts, _ := m.Int64Counter("jobclock.attempts", metric.WithUnit("{attempt}"), metric.WithDescription("History entries."))
	attempts.Add(ctx, 3, metric.WithAttributes(attribute.String("jobclock.action.name", "MainAction"), attribute.Int("n", -7),
		attribute.Bool("ok", true), attribute.Float64("f", 0.25), attribute.StringSlice("tags", []string{"a", "b"})))
	duration, _ := m.Float64Histogram("jobclock.attempt.duration", metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(0.5, 1))
	for _, v := range []float64{0.25, 0.75, 4} {
		duration.Record(ctx, v)
	}
	_, _ = m.Int64ObservableGauge("jobclock.jobs.due", metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
		o.Observe(12)
		return nil
	}))
	if err := mp.ForceFlush(ctx); err != nil {
		t.Fatalf("ForceFlush: %v (rejected: %q)", err, col.Rejected())
	}

	reqs := col.Metrics()
	if len(reqs) != 1 || len(reqs[0].ResourceMetrics) != 1 {
		t.Fatalf("received %d requests (%v), want one of one resource; rejected: %q", len(reqs), reqs, col.Rejected())
	}
	rm := reqs[0].ResourceMetrics[0]
	if diff := cmp.Diff(map[string]*commonpb.AnyValue{"service.name": str("jobclock"), "service.instance.id": str("i-1")},
		attrs(rm.GetResource().GetAttributes()), protocmp.Transform()); diff != "" {
		t.Errorf("resource attributes (-want +got):\n%s", diff)
	}
	if rm.SchemaUrl != "https://opentelemetry.io/schemas/1.37.0" {
		t.Errorf("resource schemaUrl = %q", rm.SchemaUrl)
	}
	if len(rm.ScopeMetrics) != 1 {
		t.Fatalf("%d scopes, want 1", len(rm.ScopeMetrics))
	}
	sm := rm.ScopeMetrics[0]
	if sm.Scope.GetName() != "github.com/jobclock/scheduler" || sm.Scope.GetVersion() != "v1.2.3" {
		t.Errorf("scope = %v", sm.Scope)
	}
	byName := map[string]*metricpb.Metric{}
	for _, m := range sm.Metrics {
		byName[m.Name] = m
	}

	sum := byName["jobclock.attempts"]
	if sum.GetUnit() != "{attempt}" || sum.GetDescription() != "History entries." || !sum.GetSum().GetIsMonotonic() ||
		sum.GetSum().GetAggregationTemporality() != metricpb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE {
		t.Errorf("jobclock.attempts = %v, want a cumulative monotonic sum in {attempt}", sum)
	}
	if pts := sum.GetSum().GetDataPoints(); len(pts) != 1 || pts[0].GetAsInt() != 3 {
		t.Fatalf("jobclock.attempts points = %v, want one of 3", pts)
	}
	p := sum.GetSum().GetDataPoints()[0]
	wantAttrs := map[string]*commonpb.AnyValue{
		"jobclock.action.name": str("MainAction"),
		"n":                    {Value: &commonpb.AnyValue_IntValue{IntValue: -7}},
		"ok":                   {Value: &commonpb.AnyValue_BoolValue{BoolValue: true}},
		"f":                    {Value: &commonpb.AnyValue_DoubleValue{DoubleValue: 0.25}},
		"tags":                 {Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: []*commonpb.AnyValue{str("a"), str("b")}}}},
	}
	if diff := cmp.Diff(wantAttrs, attrs(p.Attributes), protocmp.Transform()); diff != "" {
		t.Errorf("point attributes (-want +got):\n%s", diff)
	}
	start, at := time.Unix(0, int64(p.StartTimeUnixNano)), time.Unix(0, int64(p.TimeUnixNano))
	if start.Before(before.Add(-time.Second)) || at.Before(start) || at.After(time.Now()) {
		t.Errorf("point times start %v, time %v; want start near %v and time after it", start, at, before)
	}

	h := byName["jobclock.attempt.duration"].GetHistogram()
	if h.GetAggregationTemporality() != metricpb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE || len(h.GetDataPoints()) != 1 {
		t.Fatalf("jobclock.attempt.duration = %v, want one cumulative histogram point", h)
	}
	hp := h.DataPoints[0]
	type histogram struct {
		Count, Buckets any
		Sum, Min, Max  float64
		Bounds         []float64
	}
	want := histogram{Count: uint64(3), Buckets: []uint64{1, 1, 1}, Sum: 5, Min: 0.25, Max: 4, Bounds: []float64{0.5, 1}}
	got := histogram{Count: hp.Count, Buckets: hp.BucketCounts, Sum: hp.GetSum(), Min: hp.GetMin(), Max: hp.GetMax(), Bounds: hp.ExplicitBounds}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("histogram point (-want +got):\n%s", diff)
	}

	if pts := byName["jobclock.jobs.due"].GetGauge().GetDataPoints(); len(pts) != 1 || pts[0].GetAsInt() != 12 {
		t.Errorf("jobclock.jobs.due = %v, want a gauge of 12", byName["jobclock.jobs.due"])
	}
}

// TestExportMetricsPreferences: the temporality and histogram aggregation
// variables reach what is sent.
func TestExportMetricsPreferences(t *testing.T) {
	ctx := context.Background()
	t.Setenv("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE", "delta")
	t.Setenv("OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION", "base2_exponential_bucket_histogram")
	byName := exportMetrics(t, func(m metric.Meter) {
		c, _ := m.Float64Counter("c")
		c.Add(ctx, 1.5)
		h, _ := m.Float64Histogram("h")
		h.Record(ctx, 2)
		h.Record(ctx, 8)
	})
	delta := metricpb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA
	if s := byName["c"].GetSum(); s.GetAggregationTemporality() != delta || s.GetDataPoints()[0].GetAsDouble() != 1.5 {
		t.Errorf("c = %v, want a delta sum of 1.5", byName["c"])
	}
	eh := byName["h"].GetExponentialHistogram()
	if eh.GetAggregationTemporality() != delta || len(eh.GetDataPoints()) != 1 {
		t.Fatalf("h = %v, want one delta exponential histogram point", byName["h"])
	}
	p := eh.DataPoints[0]
	total := uint64(0)
	for _, n := range p.GetPositive().GetBucketCounts() {
		total += n
	}
	if p.Count != 2 || p.GetSum() != 10 || total != 2 || p.Scale == 0 {
		t.Errorf("exponential point = %v, want count 2, sum 10, 2 in the positive buckets and a scale", p)
	}
}

// TestExportOddValues: NaN and the infinities of a gauge, and the
// negative buckets of an exponential histogram, arrive as they were
// recorded.
func TestExportOddValues(t *testing.T) {
	ctx := context.Background()
	t.Setenv("OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION", "base2_exponential_bucket_histogram")
	byName := exportMetrics(t, func(m metric.Meter) {
		g, _ := m.Float64Gauge("g")
		for k, v := range map[string]float64{"nan": math.NaN(), "inf": math.Inf(1), "-inf": math.Inf(-1)} {
			g.Record(ctx, v, metric.WithAttributes(attribute.String("v", k)))
		}
		h, _ := m.Float64Histogram("h")
		h.Record(ctx, -2)
		h.Record(ctx, -8)
		h.Record(ctx, 4)
	})
	got := map[string]string{}
	for _, p := range byName["g"].GetGauge().GetDataPoints() {
		got[attrs(p.Attributes)["v"].GetStringValue()] = fmt.Sprint(p.GetAsDouble())
	}
	if diff := cmp.Diff(map[string]string{"nan": "NaN", "inf": "+Inf", "-inf": "-Inf"}, got); diff != "" {
		t.Errorf("gauge values (-want +got):\n%s", diff)
	}
	p := byName["h"].GetExponentialHistogram().GetDataPoints()[0]
	var neg, pos uint64
	for _, n := range p.GetNegative().GetBucketCounts() {
		neg += n
	}
	for _, n := range p.GetPositive().GetBucketCounts() {
		pos += n
	}
	if p.Count != 3 || neg != 2 || pos != 1 || p.GetMin() != -8 || p.GetMax() != 4 {
		t.Errorf("exponential point = %v, want count 3, 2 negative and 1 positive, min -8, max 4", p)
	}
}

// TestExportExemplars: a measurement made in a sampled span carries an
// exemplar with the span's ids, its value and its time.
func TestExportExemplars(t *testing.T) {
	tp := sdktrace.NewTracerProvider()
	defer tp.Shutdown(context.Background())
	ctx, span := tp.Tracer("test").Start(context.Background(), "s")
	defer span.End()
	byName := exportMetrics(t, func(m metric.Meter) {
		h, _ := m.Float64Histogram("h")
		h.Record(ctx, 2.5)
	})
	ex := byName["h"].GetHistogram().GetDataPoints()[0].GetExemplars()
	if len(ex) != 1 {
		t.Fatalf("exemplars %v, want 1", ex)
	}
	sc := span.SpanContext()
	if e := ex[0]; string(e.TraceId) != string(id(sc.TraceID())) || string(e.SpanId) != string(id(sc.SpanID())) || e.GetAsDouble() != 2.5 || e.TimeUnixNano == 0 {
		t.Errorf("exemplar %v, want span %v, value 2.5 and a time", e, sc)
	}
}

// exportMetrics records with record on a meter whose provider exports to
// a Collector with the METRICS settings of the environment, flushes, and
// returns the metrics of the one request by name.
func exportMetrics(t *testing.T, record func(metric.Meter)) map[string]*metricpb.Metric {
	t.Helper()
	ctx := context.Background()
	col, cfg := collector(t, "METRICS")
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(otlp.NewMetricExporter(cfg), sdkmetric.WithInterval(time.Hour))))
	defer mp.Shutdown(ctx)
	record(mp.Meter("test"))
	if err := mp.ForceFlush(ctx); err != nil {
		t.Fatalf("ForceFlush: %v (rejected: %q)", err, col.Rejected())
	}
	reqs := col.Metrics()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1; rejected: %q", len(reqs), col.Rejected())
	}
	byName := map[string]*metricpb.Metric{}
	for _, m := range reqs[0].ResourceMetrics[0].ScopeMetrics[0].Metrics {
		byName[m.Name] = m
	}
	return byName
}

// TestExportSpans sends a parent and a child span and decodes them: ids
// in hex, the parent's id, kind, status, attributes, an event and a link.
func TestExportSpans(t *testing.T) {
	ctx := context.Background()
	col, cfg := collector(t, "TRACES")
	tp := sdktrace.NewTracerProvider(sdktrace.WithResource(testResource), sdktrace.WithSyncer(otlp.NewSpanExporter(cfg)))
	defer tp.Shutdown(ctx)
	tr := tp.Tracer("github.com/jobclock/scheduler", trace.WithInstrumentationVersion("v1.2.3"))
	linked := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1, 2, 3}, SpanID: trace.SpanID{4, 5, 6}, TraceFlags: trace.FlagsSampled})
	ctx, parent := tr.Start(ctx, "PUT /jobs/{jobName}", trace.WithSpanKind(trace.SpanKindServer))
	_, child := tr.Start(ctx, "jobclock.attempt", trace.WithLinks(trace.Link{SpanContext: linked, Attributes: []attribute.KeyValue{attribute.String("why", "retry")}}))
	child.SetAttributes(attribute.String("jobclock.job", "sub1/rg/jc/flaky"), attribute.Int64("jobclock.attempt.retry", 2))
	child.AddEvent("exception", trace.WithAttributes(attribute.String("exception.message", "boom")))
	child.SetStatus(codes.Error, "503 Service Unavailable")
	child.End()
	parent.End()
	if err := tp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if rej := col.Rejected(); len(rej) > 0 {
		t.Fatalf("the collector rejected: %q", rej)
	}
	var got []*tracepb.Span
	for _, req := range col.Traces() {
		for _, rs := range req.ResourceSpans {
			if diff := cmp.Diff(map[string]*commonpb.AnyValue{"service.name": str("jobclock"), "service.instance.id": str("i-1")},
				attrs(rs.GetResource().GetAttributes()), protocmp.Transform()); diff != "" {
				t.Errorf("resource attributes (-want +got):\n%s", diff)
			}
			for _, ss := range rs.ScopeSpans {
				if ss.Scope.GetName() != "github.com/jobclock/scheduler" || ss.Scope.GetVersion() != "v1.2.3" {
					t.Errorf("scope = %v", ss.Scope)
				}
				got = append(got, ss.Spans...)
			}
		}
	}
	if len(got) != 2 {
		t.Fatalf("received %d spans, want 2", len(got))
	}
	c, p := got[0], got[1]
	pc, cc := parent.SpanContext(), child.SpanContext()
	want := &tracepb.Span{
		TraceId: id(pc.TraceID()), SpanId: id(pc.SpanID()), Name: "PUT /jobs/{jobName}",
		Kind: tracepb.Span_SPAN_KIND_SERVER, Flags: 0x101,
		StartTimeUnixNano: p.StartTimeUnixNano, EndTimeUnixNano: p.EndTimeUnixNano, Status: &tracepb.Status{},
	}
	if diff := cmp.Diff(want, p, protocmp.Transform()); diff != "" {
		t.Errorf("parent span (-want +got):\n%s", diff)
	}
	want = &tracepb.Span{
		TraceId: id(cc.TraceID()), SpanId: id(cc.SpanID()), ParentSpanId: id(pc.SpanID()), Name: "jobclock.attempt",
		Kind: tracepb.Span_SPAN_KIND_INTERNAL, Flags: 0x101,
		StartTimeUnixNano: c.StartTimeUnixNano, EndTimeUnixNano: c.EndTimeUnixNano,
		Attributes: []*commonpb.KeyValue{kv("jobclock.job", str("sub1/rg/jc/flaky")),
			kv("jobclock.attempt.retry", &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: 2}})},
		Events: []*tracepb.Span_Event{{Name: "exception", TimeUnixNano: eventTime(c), Attributes: []*commonpb.KeyValue{kv("exception.message", str("boom"))}}},
		Links: []*tracepb.Span_Link{{TraceId: id(linked.TraceID()), SpanId: id(linked.SpanID()), Flags: 0x101,
			Attributes: []*commonpb.KeyValue{kv("why", str("retry"))}}},
		Status: &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: "503 Service Unavailable"},
	}
	if diff := cmp.Diff(want, c, protocmp.Transform()); diff != "" {
		t.Errorf("child span (-want +got):\n%s", diff)
	}
	if c.StartTimeUnixNano == 0 || c.EndTimeUnixNano < c.StartTimeUnixNano {
		t.Errorf("child span from %d to %d", c.StartTimeUnixNano, c.EndTimeUnixNano)
	}
}

func id[T interface{ IsValid() bool }](v T) []byte {
	switch v := any(v).(type) {
	case trace.TraceID:
		return v[:]
	case trace.SpanID:
		return v[:]
	}
	return nil
}

func eventTime(s *tracepb.Span) uint64 {
	if len(s.Events) == 0 {
		return 0
	}
	return s.Events[0].TimeUnixNano
}

// exportOne exports a span with the exporter of cfg.
func exportOne(ctx context.Context, cfg otlp.Config) error {
	var got []sdktrace.ReadOnlySpan
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder{&got}))
	_, s := tp.Tracer("test").Start(ctx, "s")
	s.End()
	return otlp.NewSpanExporter(cfg).ExportSpans(ctx, got)
}

// recorder keeps the spans that end.
type recorder struct{ spans *[]sdktrace.ReadOnlySpan }

func (r recorder) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (r recorder) OnEnd(s sdktrace.ReadOnlySpan)                   { *r.spans = append(*r.spans, s) }
func (r recorder) Shutdown(context.Context) error                  { return nil }
func (r recorder) ForceFlush(context.Context) error                { return nil }

// TestRetries: 429, 502, 503 and 504 are retried (here at once, as the
// answers' Retry-After says), 400 is not.
func TestRetries(t *testing.T) {
	col, cfg := collector(t, "TRACES")
	statuses := []int{http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout}
	col.Answer = func(n int, r *http.Request) *otlptest.Reply {
		if n <= len(statuses) {
			return &otlptest.Reply{Status: statuses[n-1], Header: http.Header{"Retry-After": {"0"}}}
		}
		return nil
	}
	if err := exportOne(context.Background(), cfg); err != nil {
		t.Fatalf("export after 4 retryable answers: %v", err)
	}
	if n, spans := col.Requests(), len(col.Spans()); n != 5 || spans != 1 {
		t.Errorf("%d requests, %d spans received; want 5 requests and the span once", n, spans)
	}

	col2, cfg2 := collector(t, "TRACES")
	col2.Answer = func(int, *http.Request) *otlptest.Reply { return &otlptest.Reply{Status: http.StatusBadRequest} }
	err := exportOne(context.Background(), cfg2)
	if err == nil || !strings.Contains(err.Error(), "400 Bad Request") {
		t.Errorf("export answered 400 = %v, want an error naming the status", err)
	}
	if n := col2.Requests(); n != 1 {
		t.Errorf("%d requests after a 400, want 1 (not retried)", n)
	}
}

// TestRetryWithoutRetryAfter: a retryable answer without Retry-After is
// retried after the backoff (the first: 0.5 to 1.5 s).
func TestRetryWithoutRetryAfter(t *testing.T) {
	col, cfg := collector(t, "TRACES")
	col.Answer = func(n int, r *http.Request) *otlptest.Reply {
		if n == 1 {
			return &otlptest.Reply{Status: http.StatusServiceUnavailable}
		}
		return nil
	}
	if err := exportOne(context.Background(), cfg); err != nil {
		t.Fatalf("export after a 503: %v", err)
	}
	if n, spans := col.Requests(), len(col.Spans()); n != 2 || spans != 1 {
		t.Errorf("%d requests, %d spans received; want 2 requests and the span once", n, spans)
	}
}

// TestRetriesEndWithTheContext: a retry that would outlast the caller's
// context does not start.
func TestRetriesEndWithTheContext(t *testing.T) {
	col, cfg := collector(t, "TRACES")
	col.Answer = func(int, *http.Request) *otlptest.Reply {
		return &otlptest.Reply{Status: http.StatusServiceUnavailable, Header: http.Header{"Retry-After": {"5"}}}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := exportOne(ctx, cfg)
	if err == nil || !strings.Contains(err.Error(), "no time left to retry after 1 attempts") || !strings.Contains(err.Error(), "503") {
		t.Errorf("export = %v, want no time left to retry, with the 503", err)
	}
	if n := col.Requests(); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

// TestLongRetryAfter: a Retry-After longer than the longest backoff is
// honoured, not cut short, so a wait past the one-minute limit (in seconds
// or as an HTTP date) gives up at once instead of retrying early.
func TestLongRetryAfter(t *testing.T) {
	for _, after := range []string{"120", time.Now().Add(2 * time.Minute).UTC().Format(http.TimeFormat)} {
		col, cfg := collector(t, "TRACES")
		col.Answer = func(int, *http.Request) *otlptest.Reply {
			return &otlptest.Reply{Status: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {after}}}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 35*time.Second)
		err := exportOne(ctx, cfg)
		cancel()
		if err == nil || !strings.Contains(err.Error(), "giving up after 1 attempts") || !strings.Contains(err.Error(), "429") {
			t.Errorf("Retry-After %s: export = %v, want giving up after 1 attempt, with the 429", after, err)
		}
		if n := col.Requests(); n != 1 {
			t.Errorf("Retry-After %s: %d requests, want 1", after, n)
		}
	}
}

// TestTransportErrors: a request that gets no answer is retried when the
// failure is temporary (a refused connection) and fails at once when it
// would fail the same way again (a certificate the client does not trust).
func TestTransportErrors(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(&otlptest.Collector{})
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshake errors are expected
	srv.StartTLS()
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	cfg, err := otlp.ConfigFromEnv("TRACES")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = exportOne(ctx, cfg)
	if err == nil || !strings.Contains(err.Error(), "certificate") || strings.Contains(err.Error(), "attempts") {
		t.Errorf("export to an untrusted certificate = %v, want the certificate error from the first attempt", err)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections to an untrusted certificate, want 1 (not retried)", n)
	}

	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", closed.URL)
	if cfg, err = otlp.ConfigFromEnv("TRACES"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	err = exportOne(ctx, cfg)
	if err == nil || !strings.Contains(err.Error(), "connection refused") || !strings.Contains(err.Error(), "attempts") {
		t.Errorf("export to a closed port = %v, want connection refused after retries", err)
	}
}

// TestPartialSuccess: an answer that rejects part of the request, or
// carries a message, fails the export without a retry; member names are
// read in either JSON spelling.
func TestPartialSuccess(t *testing.T) {
	for _, tt := range []struct{ answer, want string }{
		{`{"partialSuccess": {"rejectedSpans": "1", "errorMessage": "span too old"}}`, "rejected 1 items: span too old"},
		{`{"partial_success": {"rejected_spans": "2", "error_message": "span too old"}}`, "rejected 2 items: span too old"},
		{`{"partialSuccess": {"errorMessage": "attribute cut"}}`, "took everything, with a warning: attribute cut"},
		{`{"partialSuccess": {}}`, ""},
	} {
		col, cfg := collector(t, "TRACES")
		col.Answer = func(int, *http.Request) *otlptest.Reply {
			return &otlptest.Reply{Status: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}}, Body: tt.answer}
		}
		err := exportOne(context.Background(), cfg)
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) || col.Requests() != 1 {
			t.Errorf("answer %s: export = %v after %d requests, want %q after 1", tt.answer, err, col.Requests(), tt.want)
		}
	}
}

// TestGzipAndHeaders: OTEL_EXPORTER_OTLP_COMPRESSION and the header
// variables reach the request.
func TestGzipAndHeaders(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip")
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "Authorization=Bearer%20abc,X-Tenant=one")
	col, cfg := collector(t, "TRACES")
	if err := exportOne(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	h := col.Headers()[0]
	if h.Get("Content-Encoding") != "gzip" || h.Get("Authorization") != "Bearer abc" || h.Get("X-Tenant") != "one" || len(col.Spans()) != 1 {
		t.Errorf("headers %v, %d spans; want gzip, Bearer abc, X-Tenant one and the span", h, len(col.Spans()))
	}
	if ua := h.Get("User-Agent"); ua != "jobclock" {
		t.Errorf("User-Agent %q without Config.UserAgent, want jobclock", ua)
	}
	cfg.UserAgent = "jobclock/v1.2.3"
	if err := exportOne(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if ua := col.Headers()[1].Get("User-Agent"); ua != cfg.UserAgent {
		t.Errorf("User-Agent %q, want Config.UserAgent %q", ua, cfg.UserAgent)
	}
}

// TestSignalHeadersReplaceTheGeneralOnes: a signal sent to an endpoint of
// its own with headers of its own does not carry the general variable's
// credentials.
func TestSignalHeadersReplaceTheGeneralOnes(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "Api-Key=SECRET-A,X-Tenant=one")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "X-B-Key=B")
	col, cfg := collector(t, "TRACES")
	if err := exportOne(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	h := col.Headers()[0]
	if h.Get("X-B-Key") != "B" || h.Get("Api-Key") != "" || h.Get("X-Tenant") != "" {
		t.Errorf("headers %v; want X-B-Key B and neither Api-Key nor X-Tenant", h)
	}
}

func TestConfigFromEnv(t *testing.T) {
	for _, tt := range []struct {
		name    string
		env     map[string]string
		signal  string
		wantURL string
		wantErr string
	}{
		{"base URL gets the signal's path", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, "TRACES", "http://c:4318/v1/traces", ""},
		{"base URL with a path", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://c/otlp/"}, "METRICS", "https://c/otlp/v1/metrics", ""},
		{"signal URL as it is", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://b:1/m"}, "METRICS", "http://b:1/m", ""},
		{"signal URL without a path", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://b:1"}, "TRACES", "http://b:1/", ""},
		{"default", nil, "TRACES", "http://localhost:4318/v1/traces", ""},
		{"grpc", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"}, "TRACES", "", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=grpc: OTLP over gRPC is not supported"},
		{"unknown protocol", map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http"}, "TRACES", "", `OTEL_EXPORTER_OTLP_PROTOCOL="http": not an OTLP protocol`},
		{"not a URL", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"}, "TRACES", "", `OTEL_EXPORTER_OTLP_ENDPOINT="collector:4318": want an http:// or https:// URL`},
		{"compression", map[string]string{"OTEL_EXPORTER_OTLP_METRICS_COMPRESSION": "zstd"}, "METRICS", "", `OTEL_EXPORTER_OTLP_METRICS_COMPRESSION="zstd": want gzip or none`},
		{"timeout", map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "-1"}, "METRICS", "", `OTEL_EXPORTER_OTLP_TIMEOUT="-1": want a positive number of milliseconds`},
		{"temporality", map[string]string{"OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE": "Sometimes"}, "METRICS", "", `OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE="Sometimes"`},
		{"temporality in capitals", map[string]string{"OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE": "Delta"}, "METRICS", "http://localhost:4318/v1/metrics", ""},
		{"aggregation", map[string]string{"OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION": "Buckets"}, "METRICS", "", `OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION="Buckets": want`},
		{"temporality is for metrics", map[string]string{"OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE": "sometimes"}, "TRACES", "http://localhost:4318/v1/traces", ""},
		{"CA file", map[string]string{"OTEL_EXPORTER_OTLP_CERTIFICATE": "/nonexistent/ca.pem"}, "TRACES", "", "OTEL_EXPORTER_OTLP_CERTIFICATE: open /nonexistent/ca.pem"},
		{"headers", map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "A=1,B=2%20%C3%BC"}, "TRACES", "http://localhost:4318/v1/traces", ""},
		{"header without =", map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "A=1,Authorization Bearer sekrit"}, "TRACES", "", "OTEL_EXPORTER_OTLP_HEADERS: pair 2: want key=value"},
		{"header name", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_HEADERS": "bad key=sekrit"}, "TRACES", "", `OTEL_EXPORTER_OTLP_TRACES_HEADERS: pair 1: "bad key" is not a header name`},
		{"header escape", map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "Authorization=sekrit%zz"}, "TRACES", "", "OTEL_EXPORTER_OTLP_HEADERS: header Authorization: the value has a malformed %-escape"},
		{"header value", map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "Authorization=sekrit%0Ax"}, "TRACES", "", "OTEL_EXPORTER_OTLP_HEADERS: header Authorization: the value holds a control character"},
		{"client key alone", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY": "/k.pem"}, "TRACES", "", "OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY is set without OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE or OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE"},
		{"client certificate alone", map[string]string{"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": "/c.pem"}, "METRICS", "", "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE is set without OTEL_EXPORTER_OTLP_METRICS_CLIENT_KEY or OTEL_EXPORTER_OTLP_CLIENT_KEY"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, v := range []string{"ENDPOINT", "PROTOCOL", "HEADERS", "TIMEOUT", "COMPRESSION", "CERTIFICATE", "CLIENT_CERTIFICATE", "CLIENT_KEY"} {
				for _, prefix := range []string{"OTEL_EXPORTER_OTLP_", "OTEL_EXPORTER_OTLP_TRACES_", "OTEL_EXPORTER_OTLP_METRICS_"} {
					t.Setenv(prefix+v, "")
				}
			}
			t.Setenv("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE", "")
			t.Setenv("OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION", "")
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			cfg, err := otlp.ConfigFromEnv(tt.signal)
			if err != nil && strings.Contains(err.Error(), "sekrit") {
				t.Errorf("ConfigFromEnv(%s) error = %v, shows a header's value", tt.signal, err)
			}
			switch {
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("ConfigFromEnv(%s) error = %v, want %q", tt.signal, err, tt.wantErr)
			case tt.wantErr == "" && err != nil:
				t.Errorf("ConfigFromEnv(%s) error = %v", tt.signal, err)
			case tt.wantErr == "" && cfg.URL != tt.wantURL:
				t.Errorf("ConfigFromEnv(%s).URL = %q, want %q", tt.signal, cfg.URL, tt.wantURL)
			}
		})
	}
}

// TestShutdown: an export after Shutdown fails with ErrShutdown.
func TestShutdown(t *testing.T) {
	_, cfg := collector(t, "METRICS")
	exp := otlp.NewMetricExporter(cfg)
	if err := exp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	c, _ := mp.Meter("m").Int64Counter("c")
	c.Add(context.Background(), 1)
	rm := new(metricdata.ResourceMetrics)
	if err := reader.Collect(context.Background(), rm); err != nil {
		t.Fatal(err)
	}
	if err := exp.Export(context.Background(), rm); !errors.Is(err, otlp.ErrShutdown) {
		t.Errorf("Export after Shutdown = %v, want ErrShutdown", err)
	}
}

// TestStrictJSON: the receiver refuses what the protobuf JSON mapping
// would accept but OTLP's JSON encoding does not allow a writer to send,
// so that the exporter tests catch an encoder that sends it.
func TestStrictJSON(t *testing.T) {
	const ok = `{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"name":"m","sum":{"aggregationTemporality":2,"dataPoints":[{"timeUnixNano":"1","asInt":"3"}]}}]}]}]}`
	for _, tt := range []struct{ name, body, want string }{
		{"as written", ok, ""},
		{"snake_case", strings.Replace(ok, "timeUnixNano", "time_unix_nano", 1), "$.resourceMetrics[0].scopeMetrics[0].metrics[0].sum.dataPoints[0].time_unix_nano: not a member"},
		{"64-bit number", strings.Replace(ok, `"asInt":"3"`, `"asInt":3`, 1), "$.resourceMetrics[0].scopeMetrics[0].metrics[0].sum.dataPoints[0].asInt: a 64-bit integer, want a string"},
		{"enum name", strings.Replace(ok, `"aggregationTemporality":2`, `"aggregationTemporality":"AGGREGATION_TEMPORALITY_CUMULATIVE"`, 1), "sum.aggregationTemporality: an enum, want a number"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := otlptest.Unmarshal([]byte(tt.body), &colmetricpb.ExportMetricsServiceRequest{})
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("Unmarshal(%s) = %v, want %q", tt.body, err, tt.want)
			}
		})
	}
}

// TestShutdownStopsARetry: Shutdown ends an export that waits to retry,
// with ErrShutdown and no further request.
func TestShutdownStopsARetry(t *testing.T) {
	col, cfg := collector(t, "TRACES")
	answered := make(chan struct{}, 1)
	col.Answer = func(int, *http.Request) *otlptest.Reply {
		select {
		case answered <- struct{}{}:
		default:
		}
		return &otlptest.Reply{Status: http.StatusServiceUnavailable, Header: http.Header{"Retry-After": {"5"}}}
	}
	var got []sdktrace.ReadOnlySpan
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder{&got}))
	_, s := tp.Tracer("test").Start(context.Background(), "s")
	s.End()
	exp := otlp.NewSpanExporter(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	done := make(chan error)
	go func() { done <- exp.ExportSpans(ctx, got) }()
	<-answered
	if err := exp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, otlp.ErrShutdown) || !strings.Contains(err.Error(), "503") {
		t.Errorf("export stopped by Shutdown = %v, want ErrShutdown with the 503", err)
	}
	if n := col.Requests(); n != 1 {
		t.Errorf("%d requests, want 1 (no retry after Shutdown)", n)
	}
}

// TestStopRetries: StopRetries ends an export that waits to retry with
// the error of its request, and makes a later export one request, so
// that the flush at exit does not wait out a backoff.
func TestStopRetries(t *testing.T) {
	col, cfg := collector(t, "TRACES")
	answered := make(chan struct{}, 1)
	col.Answer = func(int, *http.Request) *otlptest.Reply {
		select {
		case answered <- struct{}{}:
		default:
		}
		return &otlptest.Reply{Status: http.StatusServiceUnavailable, Header: http.Header{"Retry-After": {"5"}}}
	}
	var got []sdktrace.ReadOnlySpan
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder{&got}))
	_, s := tp.Tracer("test").Start(context.Background(), "s")
	s.End()
	exp := otlp.NewSpanExporter(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	done := make(chan error)
	go func() { done <- exp.ExportSpans(ctx, got) }()
	<-answered
	exp.StopRetries()
	if err := <-done; err == nil || errors.Is(err, otlp.ErrShutdown) || ctx.Err() != nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("export waiting to retry, after StopRetries = %v (context %v); want the 503, before the context ends", err, ctx.Err())
	}
	if err := exp.ExportSpans(ctx, got); err == nil || ctx.Err() != nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("export after StopRetries = %v (context %v); want the 503 of one request", err, ctx.Err())
	}
	if n := col.Requests(); n != 2 {
		t.Errorf("%d requests, want 2 (one per export, no retry after StopRetries)", n)
	}
}
