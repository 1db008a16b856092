package promtext_test

import (
	"compress/gzip"
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/jobclock/scheduler/cmd/jobclock/internal/promtext"
)

// scrape serves what reader collects with Handler and parses it with the
// Prometheus text parser.
func scrape(t *testing.T, reader sdkmetric.Reader) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(promtext.Handler(reader))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != promtext.ContentType {
		t.Errorf("Content-Type %q, want %q", ct, promtext.ContentType)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse the exposition: %v", err)
	}
	return fams
}

// meter returns a manual reader and a meter of a provider that reads into
// it, shut down when the test ends.
func meter(tb testing.TB) (*sdkmetric.ManualReader, metric.Meter) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	tb.Cleanup(func() { mp.Shutdown(context.Background()) })
	return reader, mp.Meter("m")
}

func labelMap(m *dto.Metric) map[string]string {
	l := map[string]string{}
	for _, p := range m.GetLabel() {
		l[p.GetName()] = p.GetValue()
	}
	return l
}

// TestHandlerExposition records into an SDK meter and reads the scrape
// with the Prometheus parser: names with units and _total, types, help
// texts, labels with the scope's, escaped values, histogram buckets, sum
// and count, target_info and the runtime's metrics.
func TestHandlerExposition(t *testing.T) {
	ctx := context.Background()
	reader := sdkmetric.NewManualReader()
	res := resource.NewSchemaless(attribute.String("service.name", "jobclock"), attribute.String("service.instance.id", "i-1"))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader), sdkmetric.WithResource(res))
	defer mp.Shutdown(ctx)
	m := mp.Meter("github.com/jobclock/scheduler", metric.WithInstrumentationVersion("v1.2.3"))

	attempts, _ := m.Int64Counter("jobclock.attempts", metric.WithUnit("{attempt}"),
		metric.WithDescription("History entries,\nby outcome \\ action."))
	tricky := `say "hi"\ and` + "\nbye"
	attempts.Add(ctx, 2, metric.WithAttributes(attribute.String("jobclock.action.name", "MainAction"), attribute.String("jobclock.job", tricky)))
	attempts.Add(ctx, 1, metric.WithAttributes(attribute.String("jobclock.action.name", "ErrorAction"), attribute.String("jobclock.job", "b")))
	duration, _ := m.Float64Histogram("jobclock.attempt.duration", metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(0.5, 1, 2.5))
	for _, v := range []float64{0.1, 0.7, 0.9, 3} {
		duration.Record(ctx, v, metric.WithAttributes(attribute.String("jobclock.action.type", "Http")))
	}
	_, _ = m.Int64ObservableGauge("jobclock.jobs.due", metric.WithUnit("{job}"), metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
		o.Observe(7)
		return nil
	}))
	updown, _ := m.Int64UpDownCounter("queue.bytes", metric.WithUnit("By"))
	updown.Add(ctx, -3)
	rate, _ := m.Float64Counter("transfer", metric.WithUnit("By/s"))
	rate.Add(ctx, 1.5, metric.WithAttributes(attribute.String("a.b", "x"), attribute.String("a_b", "y"), attribute.Int("2nd", 2), attribute.String("é", "dropped")))

	fams := scrape(t, reader)
	scope := map[string]string{"otel_scope_name": "github.com/jobclock/scheduler", "otel_scope_version": "v1.2.3", "otel_scope_schema_url": ""}
	with := func(l map[string]string) map[string]string {
		for k, v := range scope {
			l[k] = v
		}
		return l
	}

	type point struct {
		Labels map[string]string
		Value  float64
	}
	points := func(name string, typ dto.MetricType) []point {
		t.Helper()
		f := fams[name]
		if f == nil {
			t.Fatalf("no family %s; have %v", name, keys(fams))
		}
		if f.GetType() != typ {
			t.Errorf("%s is a %v, want %v", name, f.GetType(), typ)
		}
		var out []point
		for _, m := range f.GetMetric() {
			out = append(out, point{labelMap(m), m.GetCounter().GetValue() + m.GetGauge().GetValue()})
		}
		return out
	}

	if got, want := fams["jobclock_attempts_total"].GetHelp(), "History entries,\nby outcome \\ action."; got != want {
		t.Errorf("help = %q, want %q", got, want)
	}
	wantAttempts := []point{
		{with(map[string]string{"jobclock_action_name": "ErrorAction", "jobclock_job": "b"}), 1},
		{with(map[string]string{"jobclock_action_name": "MainAction", "jobclock_job": tricky}), 2},
	}
	if diff := cmp.Diff(wantAttempts, points("jobclock_attempts_total", dto.MetricType_COUNTER)); diff != "" {
		t.Errorf("jobclock_attempts_total (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]point{{with(map[string]string{}), 7}}, points("jobclock_jobs_due", dto.MetricType_GAUGE)); diff != "" {
		t.Errorf("jobclock_jobs_due (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]point{{with(map[string]string{}), -3}}, points("queue_bytes", dto.MetricType_GAUGE)); diff != "" {
		t.Errorf("queue_bytes, an up-down counter (-want +got):\n%s", diff)
	}
	// Attributes that make the same label are joined in sorted order; a
	// leading digit gets "key_".
	if diff := cmp.Diff([]point{{with(map[string]string{"a_b": "x;y", "key_2nd": "2"}), 1.5}}, points("transfer_bytes_per_second_total", dto.MetricType_COUNTER)); diff != "" {
		t.Errorf("transfer_bytes_per_second_total (-want +got):\n%s", diff)
	}

	h := fams["jobclock_attempt_duration_seconds"]
	if h.GetType() != dto.MetricType_HISTOGRAM || len(h.GetMetric()) != 1 {
		t.Fatalf("jobclock_attempt_duration_seconds = %v, want one histogram series", h)
	}
	hm := h.GetMetric()[0]
	if diff := cmp.Diff(with(map[string]string{"jobclock_action_type": "Http"}), labelMap(hm)); diff != "" {
		t.Errorf("histogram labels (-want +got):\n%s", diff)
	}
	type bucket struct{ Le, Count float64 }
	var buckets []bucket
	for _, b := range hm.GetHistogram().GetBucket() {
		buckets = append(buckets, bucket{b.GetUpperBound(), float64(b.GetCumulativeCount())})
	}
	if diff := cmp.Diff([]bucket{{0.5, 1}, {1, 3}, {2.5, 3}, {math.Inf(1), 4}}, buckets); diff != "" {
		t.Errorf("cumulative buckets (-want +got):\n%s", diff)
	}
	if got := hm.GetHistogram(); got.GetSampleCount() != 4 || got.GetSampleSum() != 4.7 {
		t.Errorf("histogram count %d sum %v, want 4 and 4.7", got.GetSampleCount(), got.GetSampleSum())
	}

	ti := points("target_info", dto.MetricType_GAUGE)
	if diff := cmp.Diff([]point{{map[string]string{"service_name": "jobclock", "service_instance_id": "i-1"}, 1}}, ti); diff != "" {
		t.Errorf("target_info (-want +got):\n%s", diff)
	}
	for name, typ := range map[string]dto.MetricType{
		"go_goroutines": dto.MetricType_GAUGE, "go_memstats_alloc_bytes_total": dto.MetricType_COUNTER,
		"go_gc_duration_seconds": dto.MetricType_SUMMARY, "go_info": dto.MetricType_GAUGE,
		"process_cpu_seconds_total": dto.MetricType_COUNTER, "process_resident_memory_bytes": dto.MetricType_GAUGE,
		"process_open_fds": dto.MetricType_GAUGE, "process_start_time_seconds": dto.MetricType_GAUGE,
	} {
		f := fams[name]
		if f.GetType() != typ || len(f.GetMetric()) != 1 {
			t.Errorf("%s = %v, want one %v", name, f, typ)
		}
	}
	if v := fams["go_goroutines"].GetMetric()[0].GetGauge().GetValue(); v < 1 {
		t.Errorf("go_goroutines = %v, want at least 1", v)
	}
	if v := fams["process_resident_memory_bytes"].GetMetric()[0].GetGauge().GetValue(); v < 1<<20 {
		t.Errorf("process_resident_memory_bytes = %v, want at least 1 MiB", v)
	}
}

func keys(m map[string]*dto.MetricFamily) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestHandlerCollectError: a reader that cannot collect answers 500.
func TestHandlerCollectError(t *testing.T) {
	reader := sdkmetric.NewManualReader() // not registered with a MeterProvider
	rec := httptest.NewRecorder()
	promtext.Handler(reader).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), "collecting metrics") {
		t.Errorf("scrape of an unregistered reader = %d %q, want 500 collecting metrics: ...", rec.Code, rec.Body.String())
	}
}

func TestMetricName(t *testing.T) {
	for _, tt := range []struct{ name, unit, typ, want string }{
		{"jobclock.attempts", "{attempt}", "counter", "jobclock_attempts_total"},
		{"jobclock.attempt.duration", "s", "histogram", "jobclock_attempt_duration_seconds"},
		{"http.server.request.duration", "s", "histogram", "http_server_request_duration_seconds"},
		{"jobclock.jobs", "{job}", "gauge", "jobclock_jobs"},
		{"requests.total", "", "counter", "requests_total"},
		{"latency_seconds", "s", "gauge", "latency_seconds"},
		{"cpu.utilization", "1", "gauge", "cpu_utilization_ratio"},
		{"io", "By/s", "counter", "io_bytes_per_second_total"},
		{"3xx", "", "gauge", "_3xx"},
		{"odd--name", "m/{x}", "gauge", "odd_name_meters"},
		{"x", "By./s", "gauge", "x_By_per_second"},
		{"x", "By/s.", "gauge", "x_bytes_per_s"},
	} {
		if got := promtext.MetricName(tt.name, tt.unit, tt.typ); got != tt.want {
			t.Errorf("MetricName(%q, %q, %q) = %q, want %q", tt.name, tt.unit, tt.typ, got, tt.want)
		}
	}
}

func TestLabelName(t *testing.T) {
	for in, want := range map[string]string{
		"jobclock.action.type": "jobclock_action_type", "http.response.status_code": "http_response_status_code",
		"a..b": "a_b", "2nd": "key_2nd", "__meta__": "__meta__", "___": "", "é": "",
	} {
		if got := promtext.LabelName(in); got != want {
			t.Errorf("LabelName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestHandlerNamelessMetrics: a metric whose name keeps no character a
// Prometheus name can hold is left out, and the rest of the scrape reads.
func TestHandlerNamelessMetrics(t *testing.T) {
	reader, m := meter(t)
	for _, name := range []string{"ü", "...", "jobclock.queue"} {
		g, _ := m.Int64Gauge(name)
		g.Record(context.Background(), 2)
	}
	fams := scrape(t, reader)
	if fams["jobclock_queue"] == nil || fams[""] != nil {
		t.Errorf("families %v, want jobclock_queue and none without a name", keys(fams))
	}
}

// TestHandlerEmptyResource: a provider with an empty resource still has
// target_info, 1 without labels.
func TestHandlerEmptyResource(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader), sdkmetric.WithResource(resource.Empty()))
	defer mp.Shutdown(context.Background())
	fams := scrape(t, reader)
	ti := fams["target_info"].GetMetric()
	if len(ti) != 1 || len(ti[0].GetLabel()) != 0 || ti[0].GetGauge().GetValue() != 1 {
		t.Errorf("target_info = %v, want 1 without labels", ti)
	}
}

// TestHandlerGzip: a scrape that accepts gzip gets the exposition gzipped;
// one that does not, or refuses it, gets it plain.
func TestHandlerGzip(t *testing.T) {
	reader, m := meter(t)
	c, _ := m.Int64Counter("jobclock.attempts")
	c.Add(context.Background(), 5)
	h := promtext.Handler(reader)
	for _, tt := range []struct {
		accept string
		gzip   bool
	}{
		{"gzip", true}, {"deflate, gzip;q=0.5", true}, {"", false}, {"gzip;q=0", false}, {"identity", false},
	} {
		req := httptest.NewRequest("GET", "/metrics", nil)
		if tt.accept != "" {
			req.Header.Set("Accept-Encoding", tt.accept)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var body io.Reader = rec.Body
		if got := rec.Header().Get("Content-Encoding") == "gzip"; got != tt.gzip {
			t.Errorf("Accept-Encoding %q: gzipped %v, want %v", tt.accept, got, tt.gzip)
			continue
		}
		if tt.gzip {
			zr, err := gzip.NewReader(rec.Body)
			if err != nil {
				t.Fatalf("Accept-Encoding %q: %v", tt.accept, err)
			}
			body = zr
		}
		parser := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := parser.TextToMetricFamilies(body)
		if err != nil {
			t.Fatalf("Accept-Encoding %q: parse: %v", tt.accept, err)
		}
		if v := fams["jobclock_attempts_total"].GetMetric()[0].GetCounter().GetValue(); v != 5 {
			t.Errorf("Accept-Encoding %q: jobclock_attempts_total = %v, want 5", tt.accept, v)
		}
	}
}

// BenchmarkHandlerGzip measures a gzipped scrape of a few families.
func BenchmarkHandlerGzip(b *testing.B) {
	reader, m := meter(b)
	c, _ := m.Int64Counter("jobclock.attempts")
	c.Add(context.Background(), 5)
	h := promtext.Handler(reader)
	req := httptest.NewRequest("GET", "/metrics", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
}
