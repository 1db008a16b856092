// Package promtext serves the metrics of an OpenTelemetry SDK in the
// Prometheus text exposition format (version 0.0.4), with the Go runtime's
// and the process's metrics beside them, without the Prometheus client
// library or OpenTelemetry's Prometheus exporter.
//
// Names and labels are those OpenTelemetry's Prometheus exporter writes
// with its default translation (UnderscoreEscapingWithSuffixes): dots and
// other characters outside [a-zA-Z0-9:_] become underscores, the unit is
// appended as a word ("s" becomes _seconds, "By" _bytes, "{attempt}"
// nothing), monotonic sums end in _total, and every series carries the
// labels otel_scope_name, otel_scope_version and otel_scope_schema_url of
// its instrumentation scope. The resource's attributes are the labels of
// the gauge target_info. The runtime's and the process's metrics have the
// names of the Prometheus client's Go and process collectors (go_goroutines,
// go_memstats_*, process_cpu_seconds_total, ...).
package promtext

import (
	"bufio"
	"cmp"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// ContentType is the media type of the text exposition format.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// Collector is what Handler reads metrics from: an SDK reader such as
// go.opentelemetry.io/otel/sdk/metric.ManualReader.
type Collector interface {
	Collect(ctx context.Context, rm *metricdata.ResourceMetrics) error
}

// Handler serves GET requests with the metrics c collects, followed by the
// Go runtime's and the process's, gzipped when the request accepts gzip
// (as Prometheus's scrapes do). A failed collection answers 500 with the
// error.
func Handler(c Collector) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var rm metricdata.ResourceMetrics
		if err := c.Collect(r.Context(), &rm); err != nil {
			http.Error(w, "collecting metrics: "+err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", ContentType)
		w.Header().Add("Vary", "Accept-Encoding")
		var out io.Writer = w
		if acceptsGzip(r.Header.Get("Accept-Encoding")) {
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzipWriters.Get().(*gzip.Writer)
			zw.Reset(w)
			defer func() {
				zw.Close()
				zw.Reset(io.Discard) // let go of w
				gzipWriters.Put(zw)
			}()
			out = zw
		}
		// An error here is the scraper's connection failing: there is no
		// one left to answer.
		_ = Write(out, &rm)
	})
}

// gzipWriters keeps the compressors of earlier scrapes: each holds
// hundreds of kilobytes of tables that a new one would allocate again.
var gzipWriters = sync.Pool{New: func() any { return gzip.NewWriter(io.Discard) }}

// acceptsGzip reports whether an Accept-Encoding header lists gzip with a
// weight above zero.
func acceptsGzip(h string) bool {
	for part := range strings.SplitSeq(h, ",") {
		coding, params, _ := strings.Cut(part, ";")
		if strings.TrimSpace(coding) != "gzip" {
			continue
		}
		q, found := strings.CutPrefix(strings.ReplaceAll(params, " ", ""), "q=")
		if !found {
			return true
		}
		w, err := strconv.ParseFloat(q, 64)
		return err == nil && w > 0
	}
	return false
}

// Write writes rm, the Go runtime's metrics and the process's in the text
// format, families sorted by name and series by labels.
func Write(w io.Writer, rm *metricdata.ResourceMetrics) error {
	fams := families(rm)
	fams = append(fams, runtimeFamilies()...)
	fams = append(fams, processFamilies()...)
	return write(w, fams)
}

// A family is the metrics of one name.
type family struct {
	name, help, typ string // typ: counter, gauge, histogram or summary
	series          []series
}

// A series is one set of labels' samples: one for a counter or gauge,
// _bucket, _sum and _count for a histogram.
type series struct {
	labels  []label // sorted by name
	samples []sample
}

type sample struct {
	suffix string // "", "_bucket", "_sum", "_count"
	le     string // the bucket's upper bound (or a summary's quantile, with quantile set)
	value  float64
}

type label struct{ name, value string }

// families translates what the SDK collected into families, merging those
// of the same name (the first description and type win, as in
// OpenTelemetry's exporter; a metric of another type under a name taken
// is dropped).
func families(rm *metricdata.ResourceMetrics) []family {
	byName := map[string]*family{}
	var order []string
	add := func(f family) {
		if have, ok := byName[f.name]; ok {
			if have.typ == f.typ {
				have.series = append(have.series, f.series...)
			}
			return
		}
		byName[f.name] = &f
		order = append(order, f.name)
	}
	if rm.Resource != nil {
		// Written for an empty resource too, as OpenTelemetry's exporter
		// does: target_info 1 without labels.
		add(family{name: "target_info", help: "Target metadata", typ: "gauge",
			series: []series{{labels: labels(rm.Resource.Set(), nil), samples: []sample{{value: 1}}}}})
	}
	for _, sm := range rm.ScopeMetrics {
		scope := []label{
			{"otel_scope_name", sm.Scope.Name},
			{"otel_scope_schema_url", sm.Scope.SchemaURL},
			{"otel_scope_version", sm.Scope.Version},
		}
		for _, l := range attributeLabels(&sm.Scope.Attributes) {
			switch l.name {
			case "name", "version", "schema_url":
			default:
				scope = append(scope, label{"otel_scope_" + l.name, l.value})
			}
		}
		for _, m := range sm.Metrics {
			if f, ok := metricFamily(m, scope); ok {
				add(f)
			}
		}
	}
	out := make([]family, 0, len(order))
	for _, name := range order {
		out = append(out, *byName[name])
	}
	return out
}

// metricFamily translates one metric; ok is false for kinds the text
// format has no place for (exponential histograms, summaries) and for a
// name of which nothing is left in Prometheus's characters.
func metricFamily(m metricdata.Metrics, scope []label) (f family, ok bool) {
	f.help = m.Description
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		f.typ, f.series = sumSeries(d, scope)
	case metricdata.Sum[float64]:
		f.typ, f.series = sumSeries(d, scope)
	case metricdata.Gauge[int64]:
		f.typ, f.series = "gauge", pointSeries(d.DataPoints, scope)
	case metricdata.Gauge[float64]:
		f.typ, f.series = "gauge", pointSeries(d.DataPoints, scope)
	case metricdata.Histogram[int64]:
		f.typ, f.series = "histogram", histogramSeries(d.DataPoints, scope)
	case metricdata.Histogram[float64]:
		f.typ, f.series = "histogram", histogramSeries(d.DataPoints, scope)
	default:
		return f, false
	}
	f.name = MetricName(m.Name, m.Unit, f.typ)
	// A name with nothing a metric name can hold ("ü", "...") has no
	// family: a nameless sample would make the whole scrape unreadable.
	return f, f.name != ""
}

func sumSeries[N int64 | float64](d metricdata.Sum[N], scope []label) (string, []series) {
	if d.IsMonotonic {
		return "counter", pointSeries(d.DataPoints, scope)
	}
	return "gauge", pointSeries(d.DataPoints, scope)
}

func pointSeries[N int64 | float64](points []metricdata.DataPoint[N], scope []label) []series {
	out := make([]series, 0, len(points))
	for _, p := range points {
		out = append(out, series{labels: labels(&p.Attributes, scope), samples: []sample{{value: float64(p.Value)}}})
	}
	return out
}

func histogramSeries[N int64 | float64](points []metricdata.HistogramDataPoint[N], scope []label) []series {
	out := make([]series, 0, len(points))
	for _, p := range points {
		s := series{labels: labels(&p.Attributes, scope)}
		cumulative := uint64(0)
		for i, bound := range p.Bounds {
			if i < len(p.BucketCounts) {
				cumulative += p.BucketCounts[i]
			}
			s.samples = append(s.samples, sample{suffix: "_bucket", le: formatFloat(bound), value: float64(cumulative)})
		}
		s.samples = append(s.samples,
			sample{suffix: "_bucket", le: "+Inf", value: float64(p.Count)},
			sample{suffix: "_sum", value: float64(p.Sum)},
			sample{suffix: "_count", value: float64(p.Count)})
		out = append(out, s)
	}
	return out
}

// labels returns the attributes as labels, with extra after them, sorted
// by name.
func labels(attrs *attribute.Set, extra []label) []label {
	out := append(attributeLabels(attrs), extra...)
	slices.SortFunc(out, func(a, b label) int { return strings.Compare(a.name, b.name) })
	return out
}

// attributeLabels returns the attributes as labels, in no order.
// Attributes whose names become the same label are joined with ";" in
// sorted order, as OpenTelemetry's exporter does; a name that no label can
// hold is left out.
func attributeLabels(attrs *attribute.Set) []label {
	values := map[string][]string{}
	for it := attrs.Iter(); it.Next(); {
		kv := it.Attribute()
		if name := LabelName(string(kv.Key)); name != "" {
			values[name] = append(values[name], kv.Value.String())
		}
	}
	out := make([]label, 0, len(values))
	for name, vs := range values {
		slices.Sort(vs)
		out = append(out, label{name, strings.Join(vs, ";")})
	}
	return out
}

// write writes the families sorted by name, each series sorted by its
// labels.
func write(w io.Writer, fams []family) error {
	slices.SortFunc(fams, func(a, b family) int { return strings.Compare(a.name, b.name) })
	bw := bufio.NewWriter(w)
	for _, f := range fams {
		if len(f.series) == 0 {
			continue
		}
		slices.SortFunc(f.series, func(a, b series) int { return compareLabels(a.labels, b.labels) })
		fmt.Fprintf(bw, "# HELP %s %s\n# TYPE %s %s\n", f.name, escapeHelp(f.help), f.name, f.typ)
		for _, s := range f.series {
			for _, smp := range s.samples {
				bw.WriteString(f.name)
				bw.WriteString(smp.suffix)
				writeLabels(bw, s.labels, f.typ, smp.le)
				bw.WriteByte(' ')
				bw.WriteString(formatFloat(smp.value))
				bw.WriteByte('\n')
			}
		}
	}
	return bw.Flush()
}

func compareLabels(a, b []label) int {
	for i := range min(len(a), len(b)) {
		if c := cmp.Or(strings.Compare(a[i].name, b[i].name), strings.Compare(a[i].value, b[i].value)); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

// writeLabels writes {name="value",...}, with le (a histogram's bucket) or
// quantile (a summary's) last; nothing when there are none.
func writeLabels(bw *bufio.Writer, ls []label, typ, le string) {
	if len(ls) == 0 && le == "" {
		return
	}
	bw.WriteByte('{')
	for i, l := range ls {
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString(l.name)
		bw.WriteString(`="`)
		bw.WriteString(escapeValue(l.value))
		bw.WriteByte('"')
	}
	if le != "" {
		if len(ls) > 0 {
			bw.WriteByte(',')
		}
		if typ == "summary" {
			bw.WriteString(`quantile="`)
		} else {
			bw.WriteString(`le="`)
		}
		bw.WriteString(le)
		bw.WriteByte('"')
	}
	bw.WriteByte('}')
}

var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	valueEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)

// escapeHelp escapes a HELP text: backslash and line feed.
func escapeHelp(s string) string { return helpEscaper.Replace(s) }

// escapeValue escapes a label value: backslash, double quote and line feed.
func escapeValue(s string) string { return valueEscaper.Replace(s) }

// formatFloat writes a value as the Prometheus client does.
func formatFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	case math.IsNaN(f):
		return "NaN"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}
