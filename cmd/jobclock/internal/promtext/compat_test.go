package promtext_test

import (
	"bytes"
	"cmp"
	"context"
	"runtime"
	"slices"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.opentelemetry.io/otel/attribute"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	"google.golang.org/protobuf/testing/protocmp"
)

// TestSameAsOpenTelemetrysExporter feeds one meter to Handler and to
// OpenTelemetry's Prometheus exporter (what the command served before,
// linked here by the test only) and compares the two expositions as the
// Prometheus parser reads them: every family's name, type and help, every
// series' labels and values, for units, suffixes, odd names, colliding
// attribute keys (of a point and of a scope), escapes, scope attributes
// and the resource. The runtime's and the process's families, which the
// exporter does not make, are left out.
func TestSameAsOpenTelemetrysExporter(t *testing.T) {
	ctx := context.Background()
	ours := sdkmetric.NewManualReader()
	reg := prometheus.NewRegistry()
	theirs, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		t.Fatal(err)
	}
	res := resource.NewSchemaless(attribute.String("service.name", "jobclock"), attribute.Int("host.cpus", 2), attribute.String("weird key", `a"b\c`))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(ours), sdkmetric.WithReader(theirs), sdkmetric.WithResource(res))
	defer mp.Shutdown(ctx)

	m := mp.Meter("github.com/jobclock/scheduler", metric.WithInstrumentationVersion("v9"),
		metric.WithInstrumentationAttributes(attribute.String("scope.kind", "engine"), attribute.String("a.b", "x"), attribute.String("a_b", "y")))
	h := mp.Meter("github.com/jobclock/scheduler/httpapi")
	attrs := metric.WithAttributes(attribute.String("jobclock.action.type", "Http"), attribute.String("a.b", "x"), attribute.String("a_b", "y"),
		attribute.Int("http.response.status_code", 201), attribute.Bool("ok", true), attribute.StringSlice("tags", []string{"p", "q"}),
		attribute.String("jobclock.job", "line\nbreak \"quoted\" back\\slash"))
	for _, c := range []struct{ name, unit string }{
		{"jobclock.attempts", "{attempt}"}, {"requests.total", ""}, {"transfer", "By/s"}, {"cpu.time", "ms"}, {"3xx.count", "1"}, {"odd--name!", "KiBy"},
		{"rate.a", "By./s"}, {"rate.b", "By/s."}, {"rate.c", "By."}, {"rate.d", "./s"},
	} {
		ctr, _ := m.Int64Counter(c.name, metric.WithUnit(c.unit), metric.WithDescription("Counts "+c.name+".\nSecond line \\ here."))
		ctr.Add(ctx, 3, attrs)
		ctr.Add(ctx, 4)
	}
	fc, _ := m.Float64Counter("jobclock.wait", metric.WithUnit("s"))
	fc.Add(ctx, 1.25, attrs)
	ud, _ := m.Int64UpDownCounter("jobclock.queue", metric.WithUnit("{job}"))
	ud.Add(ctx, -2, attrs)
	_, _ = m.Float64ObservableGauge("jobclock.utilization", metric.WithUnit("1"), metric.WithFloat64Callback(func(_ context.Context, o metric.Float64Observer) error {
		o.Observe(0.5, attrs)
		return nil
	}))
	_, _ = m.Int64ObservableGauge("jobclock.jobs", metric.WithUnit("{job}"), metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
		o.Observe(7, metric.WithAttributes(attribute.String("jobclock.job.state", "Enabled")))
		o.Observe(1, metric.WithAttributes(attribute.String("jobclock.job.state", "Faulted")))
		return nil
	}))
	dur, _ := h.Float64Histogram("http.server.request.duration", metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(0.005, 0.1, 1, 10))
	for _, v := range []float64{0.001, 0.05, 0.05, 2, 30} {
		dur.Record(ctx, v, attrs)
	}
	ih, _ := m.Int64Histogram("jobclock.batch.size", metric.WithUnit("{record}"))
	ih.Record(ctx, 12)
	ih.Record(ctx, 700)

	got := scrape(t, ours)
	for name := range got {
		if strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_") {
			delete(got, name)
		}
	}
	gathered, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	enc := expfmt.NewEncoder(&text, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, f := range gathered {
		if err := enc.Encode(f); err != nil {
			t.Fatal(err)
		}
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	want, err := parser.TextToMetricFamilies(&text)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) < 12 {
		t.Fatalf("the exporter made %d families, want at least 12", len(want))
	}
	sortSeries := func(fams map[string]*dto.MetricFamily) {
		for _, f := range fams {
			slices.SortFunc(f.Metric, func(a, b *dto.Metric) int { return strings.Compare(a.String(), b.String()) })
		}
	}
	sortSeries(got)
	sortSeries(want)
	if diff := gocmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("Handler's exposition differs from OpenTelemetry's exporter's (-exporter +Handler):\n%s", diff)
	}
}

// TestRuntimeFamiliesAsTheGoCollector: the go_* families have the names,
// types and help texts of the Prometheus client's Go collector (with its
// default metrics), and every go_memstats_* value read from
// runtime/metrics is a positive number, as a misspelt sample name would
// not give.
func TestRuntimeFamiliesAsTheGoCollector(t *testing.T) {
	runtime.GC() // so that go_memstats_last_gc_time_seconds has a time
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector())
	gathered, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, f := range gathered {
		want[f.GetName()] = f.GetType().String() + " " + f.GetHelp()
	}
	reader, _ := meter(t)
	fams := scrape(t, reader)
	got := map[string]string{}
	for name, f := range fams {
		if strings.HasPrefix(name, "go_") {
			got[name] = f.GetType().String() + " " + f.GetHelp()
		}
		if strings.HasPrefix(name, "go_memstats_") {
			m := f.GetMetric()[0]
			if v := cmp.Or(m.GetGauge().GetValue(), m.GetCounter().GetValue()); !(v > 0) {
				t.Errorf("%s = %v, want a positive number", name, v)
			}
		}
	}
	if diff := gocmp.Diff(want, got); diff != "" {
		t.Errorf("go_* families (-Go collector +Handler):\n%s", diff)
	}
}
