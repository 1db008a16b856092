package otlp

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"strconv"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

type metricsRequest struct {
	ResourceMetrics []resourceMetrics `json:"resourceMetrics"`
}

type resourceMetrics struct {
	Resource     resourceJSON   `json:"resource"`
	ScopeMetrics []scopeMetrics `json:"scopeMetrics"`
	SchemaURL    string         `json:"schemaUrl,omitempty"`
}

type scopeMetrics struct {
	Scope     scopeJSON    `json:"scope"`
	Metrics   []metricJSON `json:"metrics"`
	SchemaURL string       `json:"schemaUrl,omitempty"`
}

type metricJSON struct {
	Name                 string            `json:"name"`
	Description          string            `json:"description,omitempty"`
	Unit                 string            `json:"unit,omitempty"`
	Gauge                *gaugeJSON        `json:"gauge,omitempty"`
	Sum                  *sumJSON          `json:"sum,omitempty"`
	Histogram            *histogramJSON    `json:"histogram,omitempty"`
	ExponentialHistogram *expHistogramJSON `json:"exponentialHistogram,omitempty"`
}

type gaugeJSON struct {
	DataPoints []numberPoint `json:"dataPoints"`
}

type sumJSON struct {
	DataPoints             []numberPoint `json:"dataPoints"`
	AggregationTemporality int           `json:"aggregationTemporality,omitempty"`
	IsMonotonic            bool          `json:"isMonotonic,omitempty"`
}

type histogramJSON struct {
	DataPoints             []histogramPoint `json:"dataPoints"`
	AggregationTemporality int              `json:"aggregationTemporality,omitempty"`
}

type expHistogramJSON struct {
	DataPoints             []expHistogramPoint `json:"dataPoints"`
	AggregationTemporality int                 `json:"aggregationTemporality,omitempty"`
}

type numberPoint struct {
	Attributes        []keyValue     `json:"attributes,omitempty"`
	StartTimeUnixNano string         `json:"startTimeUnixNano,omitempty"`
	TimeUnixNano      string         `json:"timeUnixNano,omitempty"`
	AsDouble          *double        `json:"asDouble,omitempty"`
	AsInt             string         `json:"asInt,omitempty"` // int64
	Exemplars         []exemplarJSON `json:"exemplars,omitempty"`
}

type histogramPoint struct {
	Attributes        []keyValue     `json:"attributes,omitempty"`
	StartTimeUnixNano string         `json:"startTimeUnixNano,omitempty"`
	TimeUnixNano      string         `json:"timeUnixNano,omitempty"`
	Count             string         `json:"count,omitempty"`
	Sum               *double        `json:"sum,omitempty"`
	BucketCounts      []string       `json:"bucketCounts,omitempty"`
	ExplicitBounds    []double       `json:"explicitBounds,omitempty"`
	Exemplars         []exemplarJSON `json:"exemplars,omitempty"`
	Min               *double        `json:"min,omitempty"`
	Max               *double        `json:"max,omitempty"`
}

type expHistogramPoint struct {
	Attributes        []keyValue     `json:"attributes,omitempty"`
	StartTimeUnixNano string         `json:"startTimeUnixNano,omitempty"`
	TimeUnixNano      string         `json:"timeUnixNano,omitempty"`
	Count             string         `json:"count,omitempty"`
	Sum               *double        `json:"sum,omitempty"`
	Scale             int32          `json:"scale,omitempty"`
	ZeroCount         string         `json:"zeroCount,omitempty"`
	Positive          expBuckets     `json:"positive"`
	Negative          expBuckets     `json:"negative"`
	Exemplars         []exemplarJSON `json:"exemplars,omitempty"`
	Min               *double        `json:"min,omitempty"`
	Max               *double        `json:"max,omitempty"`
	ZeroThreshold     double         `json:"zeroThreshold,omitempty"`
}

type expBuckets struct {
	Offset       int32    `json:"offset,omitempty"`
	BucketCounts []string `json:"bucketCounts,omitempty"`
}

type exemplarJSON struct {
	FilteredAttributes []keyValue `json:"filteredAttributes,omitempty"`
	TimeUnixNano       string     `json:"timeUnixNano,omitempty"`
	AsDouble           *double    `json:"asDouble,omitempty"`
	AsInt              string     `json:"asInt,omitempty"`
	SpanID             string     `json:"spanId,omitempty"`
	TraceID            string     `json:"traceId,omitempty"`
}

// temporality returns the OTLP AggregationTemporality (1 delta, 2
// cumulative).
func temporality(t metricdata.Temporality) int {
	switch t {
	case metricdata.DeltaTemporality:
		return 1
	case metricdata.CumulativeTemporality:
		return 2
	}
	return 0
}

// encodeMetrics returns the ExportMetricsServiceRequest of rm; nil when it
// holds no metric.
func encodeMetrics(rm *metricdata.ResourceMetrics) ([]byte, error) {
	out := resourceMetrics{Resource: resourceOf(rm.Resource)}
	if rm.Resource != nil {
		out.SchemaURL = rm.Resource.SchemaURL()
	}
	for _, sm := range rm.ScopeMetrics {
		s := scopeMetrics{Scope: scopeOf(sm.Scope), SchemaURL: sm.Scope.SchemaURL}
		for _, m := range sm.Metrics {
			if mj, ok := metric(m); ok {
				s.Metrics = append(s.Metrics, mj)
			}
		}
		if len(s.Metrics) > 0 {
			out.ScopeMetrics = append(out.ScopeMetrics, s)
		}
	}
	if len(out.ScopeMetrics) == 0 {
		return nil, nil
	}
	return json.Marshal(&metricsRequest{ResourceMetrics: []resourceMetrics{out}})
}

// metric encodes one metric; ok is false for an aggregation this package
// does not know (summaries, which the SDK's instruments do not make).
func metric(m metricdata.Metrics) (out metricJSON, ok bool) {
	out = metricJSON{Name: m.Name, Description: m.Description, Unit: m.Unit}
	switch d := m.Data.(type) {
	case metricdata.Gauge[int64]:
		out.Gauge = &gaugeJSON{DataPoints: numberPoints(d.DataPoints)}
	case metricdata.Gauge[float64]:
		out.Gauge = &gaugeJSON{DataPoints: numberPoints(d.DataPoints)}
	case metricdata.Sum[int64]:
		out.Sum = &sumJSON{DataPoints: numberPoints(d.DataPoints), AggregationTemporality: temporality(d.Temporality), IsMonotonic: d.IsMonotonic}
	case metricdata.Sum[float64]:
		out.Sum = &sumJSON{DataPoints: numberPoints(d.DataPoints), AggregationTemporality: temporality(d.Temporality), IsMonotonic: d.IsMonotonic}
	case metricdata.Histogram[int64]:
		out.Histogram = &histogramJSON{DataPoints: histogramPoints(d.DataPoints), AggregationTemporality: temporality(d.Temporality)}
	case metricdata.Histogram[float64]:
		out.Histogram = &histogramJSON{DataPoints: histogramPoints(d.DataPoints), AggregationTemporality: temporality(d.Temporality)}
	case metricdata.ExponentialHistogram[int64]:
		out.ExponentialHistogram = &expHistogramJSON{DataPoints: expHistogramPoints(d.DataPoints), AggregationTemporality: temporality(d.Temporality)}
	case metricdata.ExponentialHistogram[float64]:
		out.ExponentialHistogram = &expHistogramJSON{DataPoints: expHistogramPoints(d.DataPoints), AggregationTemporality: temporality(d.Temporality)}
	default:
		return out, false
	}
	return out, true
}

// setNumber sets the asInt or asDouble member of a point.
func setNumber[N int64 | float64](v N, asInt *string, asDouble **double) {
	switch v := any(v).(type) {
	case int64:
		*asInt = strconv.FormatInt(v, 10)
	case float64:
		*asDouble = doublePtr(v)
	}
}

func numberPoints[N int64 | float64](points []metricdata.DataPoint[N]) []numberPoint {
	out := make([]numberPoint, 0, len(points))
	for _, p := range points {
		np := numberPoint{Attributes: setKeyValues(&p.Attributes), StartTimeUnixNano: nanos(p.StartTime),
			TimeUnixNano: nanos(p.Time), Exemplars: exemplars(p.Exemplars)}
		setNumber(p.Value, &np.AsInt, &np.AsDouble)
		out = append(out, np)
	}
	return out
}

func histogramPoints[N int64 | float64](points []metricdata.HistogramDataPoint[N]) []histogramPoint {
	out := make([]histogramPoint, 0, len(points))
	for _, p := range points {
		hp := histogramPoint{Attributes: setKeyValues(&p.Attributes), StartTimeUnixNano: nanos(p.StartTime),
			TimeUnixNano: nanos(p.Time), Count: u64(p.Count), Sum: doublePtr(float64(p.Sum)),
			BucketCounts: counts(p.BucketCounts), Exemplars: exemplars(p.Exemplars)}
		for _, b := range p.Bounds {
			hp.ExplicitBounds = append(hp.ExplicitBounds, double(b))
		}
		hp.Min, hp.Max = extrema(p.Min), extrema(p.Max)
		out = append(out, hp)
	}
	return out
}

func expHistogramPoints[N int64 | float64](points []metricdata.ExponentialHistogramDataPoint[N]) []expHistogramPoint {
	out := make([]expHistogramPoint, 0, len(points))
	for _, p := range points {
		out = append(out, expHistogramPoint{Attributes: setKeyValues(&p.Attributes), StartTimeUnixNano: nanos(p.StartTime),
			TimeUnixNano: nanos(p.Time), Count: u64(p.Count), Sum: doublePtr(float64(p.Sum)), Scale: p.Scale,
			ZeroCount: u64(p.ZeroCount), ZeroThreshold: double(p.ZeroThreshold),
			Positive: expBuckets{Offset: p.PositiveBucket.Offset, BucketCounts: counts(p.PositiveBucket.Counts)},
			Negative: expBuckets{Offset: p.NegativeBucket.Offset, BucketCounts: counts(p.NegativeBucket.Counts)},
			Min:      extrema(p.Min), Max: extrema(p.Max), Exemplars: exemplars(p.Exemplars)})
	}
	return out
}

func counts(cs []uint64) []string {
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		out = append(out, u64(c))
	}
	return out
}

func extrema[N int64 | float64](e metricdata.Extrema[N]) *double {
	if v, ok := e.Value(); ok {
		return doublePtr(float64(v))
	}
	return nil
}

func exemplars[N int64 | float64](es []metricdata.Exemplar[N]) []exemplarJSON {
	var out []exemplarJSON
	for _, e := range es {
		ej := exemplarJSON{FilteredAttributes: keyValues(e.FilteredAttributes), TimeUnixNano: nanos(e.Time),
			SpanID: hex.EncodeToString(e.SpanID), TraceID: hex.EncodeToString(e.TraceID)}
		setNumber(e.Value, &ej.AsInt, &ej.AsDouble)
		out = append(out, ej)
	}
	return out
}

// MetricExporter sends metrics to an OTLP/HTTP endpoint as JSON. Make it
// with NewMetricExporter and give it to the SDK's periodic reader.
type MetricExporter struct {
	c           *client
	temporality sdkmetric.TemporalitySelector
	aggregation sdkmetric.AggregationSelector
}

var _ sdkmetric.Exporter = (*MetricExporter)(nil)

// NewMetricExporter returns an exporter that sends to cfg.URL, typically
// with the settings ConfigFromEnv("METRICS") read. Nil selectors in cfg
// mean the SDK's defaults.
func NewMetricExporter(cfg Config) *MetricExporter {
	e := &MetricExporter{c: newClient(cfg), temporality: cfg.Temporality, aggregation: cfg.Aggregation}
	if e.temporality == nil {
		e.temporality = sdkmetric.DefaultTemporalitySelector
	}
	if e.aggregation == nil {
		e.aggregation = sdkmetric.DefaultAggregationSelector
	}
	return e
}

// Temporality returns the temporality OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE asks for.
func (e *MetricExporter) Temporality(k sdkmetric.InstrumentKind) metricdata.Temporality {
	return e.temporality(k)
}

// Aggregation returns the aggregation
// OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION asks for.
func (e *MetricExporter) Aggregation(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
	return e.aggregation(k)
}

// Export sends rm in one request, retrying as the package comment says; it sends
// nothing when rm holds no metric.
func (e *MetricExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	body, err := encodeMetrics(rm)
	if err != nil || body == nil {
		return err
	}
	return e.c.send(ctx, body)
}

// ForceFlush does nothing: the exporter holds nothing between exports.
func (e *MetricExporter) ForceFlush(ctx context.Context) error { return ctx.Err() }

// StopRetries makes each export from now on a single request, and ends
// one that waits to retry: for the last export, at exit, which should not
// wait out a backoff while the process could end.
func (e *MetricExporter) StopRetries() { e.c.stopRetries() }

// Shutdown stops the exporter: later exports fail.
func (e *MetricExporter) Shutdown(ctx context.Context) error {
	e.c.shutdown()
	return ctx.Err()
}
