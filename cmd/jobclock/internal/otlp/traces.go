package otlp

import (
	"context"
	"encoding/json"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

type traceRequest struct {
	ResourceSpans []resourceSpans `json:"resourceSpans"`
}

type resourceSpans struct {
	Resource   resourceJSON `json:"resource"`
	ScopeSpans []scopeSpans `json:"scopeSpans"`
	SchemaURL  string       `json:"schemaUrl,omitempty"`
}

type scopeSpans struct {
	Scope     scopeJSON  `json:"scope"`
	Spans     []spanJSON `json:"spans"`
	SchemaURL string     `json:"schemaUrl,omitempty"`
}

type spanJSON struct {
	TraceID                string      `json:"traceId"`
	SpanID                 string      `json:"spanId"`
	TraceState             string      `json:"traceState,omitempty"`
	ParentSpanID           string      `json:"parentSpanId,omitempty"`
	Flags                  uint32      `json:"flags,omitempty"`
	Name                   string      `json:"name"`
	Kind                   int         `json:"kind,omitempty"`
	StartTimeUnixNano      string      `json:"startTimeUnixNano,omitempty"`
	EndTimeUnixNano        string      `json:"endTimeUnixNano,omitempty"`
	Attributes             []keyValue  `json:"attributes,omitempty"`
	DroppedAttributesCount uint32      `json:"droppedAttributesCount,omitempty"`
	Events                 []eventJSON `json:"events,omitempty"`
	DroppedEventsCount     uint32      `json:"droppedEventsCount,omitempty"`
	Links                  []linkJSON  `json:"links,omitempty"`
	DroppedLinksCount      uint32      `json:"droppedLinksCount,omitempty"`
	Status                 *statusJSON `json:"status,omitempty"`
}

type eventJSON struct {
	TimeUnixNano           string     `json:"timeUnixNano,omitempty"`
	Name                   string     `json:"name"`
	Attributes             []keyValue `json:"attributes,omitempty"`
	DroppedAttributesCount uint32     `json:"droppedAttributesCount,omitempty"`
}

type linkJSON struct {
	TraceID                string     `json:"traceId"`
	SpanID                 string     `json:"spanId"`
	TraceState             string     `json:"traceState,omitempty"`
	Attributes             []keyValue `json:"attributes,omitempty"`
	DroppedAttributesCount uint32     `json:"droppedAttributesCount,omitempty"`
	Flags                  uint32     `json:"flags,omitempty"`
}

type statusJSON struct {
	Message string `json:"message,omitempty"`
	Code    int    `json:"code,omitempty"` // 0 unset, 1 ok, 2 error
}

// The flags of a span and a link: the W3C trace flags in the low byte,
// then whether the parent (or the linked span) is known to be remote or
// local, and whether it is remote.
const (
	flagHasIsRemote = 0x100
	flagIsRemote    = 0x200
)

// encodeSpans returns the ExportTraceServiceRequest of spans, grouped by
// resource and scope in the order they first appear.
func encodeSpans(spans []sdktrace.ReadOnlySpan) ([]byte, error) {
	var req traceRequest
	resources := map[attribute.Distinct]int{}
	type scopeKey struct {
		resource attribute.Distinct
		scope    instrumentation.Scope
	}
	scopes := map[scopeKey]int{}
	for _, sd := range spans {
		if sd == nil {
			continue
		}
		rk := sd.Resource().Equivalent()
		ri, ok := resources[rk]
		if !ok {
			ri = len(req.ResourceSpans)
			resources[rk] = ri
			req.ResourceSpans = append(req.ResourceSpans, resourceSpans{Resource: resourceOf(sd.Resource()), SchemaURL: sd.Resource().SchemaURL()})
		}
		rs := &req.ResourceSpans[ri]
		sk := scopeKey{rk, sd.InstrumentationScope()}
		si, ok := scopes[sk]
		if !ok {
			si = len(rs.ScopeSpans)
			scopes[sk] = si
			rs.ScopeSpans = append(rs.ScopeSpans, scopeSpans{Scope: scopeOf(sk.scope), SchemaURL: sk.scope.SchemaURL})
		}
		rs.ScopeSpans[si].Spans = append(rs.ScopeSpans[si].Spans, span(sd))
	}
	return json.Marshal(&req)
}

func span(sd sdktrace.ReadOnlySpan) spanJSON {
	sc := sd.SpanContext()
	s := spanJSON{
		TraceID:                sc.TraceID().String(),
		SpanID:                 sc.SpanID().String(),
		TraceState:             sc.TraceState().String(),
		Flags:                  flags(sc.TraceFlags(), sd.Parent()),
		Name:                   sd.Name(),
		Kind:                   spanKind(sd.SpanKind()),
		StartTimeUnixNano:      nanos(sd.StartTime()),
		EndTimeUnixNano:        nanos(sd.EndTime()),
		Attributes:             keyValues(sd.Attributes()),
		DroppedAttributesCount: clamp32(sd.DroppedAttributes()),
		DroppedEventsCount:     clamp32(sd.DroppedEvents()),
		DroppedLinksCount:      clamp32(sd.DroppedLinks()),
	}
	if p := sd.Parent().SpanID(); p.IsValid() {
		s.ParentSpanID = p.String()
	}
	for _, e := range sd.Events() {
		s.Events = append(s.Events, eventJSON{TimeUnixNano: nanos(e.Time), Name: e.Name,
			Attributes: keyValues(e.Attributes), DroppedAttributesCount: clamp32(e.DroppedAttributeCount)})
	}
	for _, l := range sd.Links() {
		s.Links = append(s.Links, linkJSON{TraceID: l.SpanContext.TraceID().String(), SpanID: l.SpanContext.SpanID().String(),
			TraceState: l.SpanContext.TraceState().String(), Attributes: keyValues(l.Attributes),
			DroppedAttributesCount: clamp32(l.DroppedAttributeCount), Flags: flags(l.SpanContext.TraceFlags(), l.SpanContext)})
	}
	st := sd.Status()
	s.Status = &statusJSON{Message: st.Description}
	switch st.Code {
	case codes.Ok:
		s.Status.Code = 1
	case codes.Error:
		s.Status.Code = 2
	}
	return s
}

func flags(tf trace.TraceFlags, parent trace.SpanContext) uint32 {
	f := uint32(tf) | flagHasIsRemote
	if parent.IsRemote() {
		f |= flagIsRemote
	}
	return f
}

// spanKind returns the OTLP SpanKind, whose numbers are OpenTelemetry's
// (1 internal, 2 server, 3 client, 4 producer, 5 consumer).
func spanKind(k trace.SpanKind) int {
	if k >= trace.SpanKindInternal && k <= trace.SpanKindConsumer {
		return int(k)
	}
	return 0
}

// SpanExporter sends spans to an OTLP/HTTP endpoint as JSON. Make it with
// NewSpanExporter and give it to the SDK's batch span processor.
type SpanExporter struct {
	c *client
}

var _ sdktrace.SpanExporter = (*SpanExporter)(nil)

// NewSpanExporter returns an exporter that sends to cfg.URL, typically
// with the settings ConfigFromEnv("TRACES") read.
func NewSpanExporter(cfg Config) *SpanExporter {
	return &SpanExporter{c: newClient(cfg)}
}

// ExportSpans sends spans in one request, retrying as the package
// comment says.
func (e *SpanExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if len(spans) == 0 {
		return nil
	}
	body, err := encodeSpans(spans)
	if err != nil {
		return err
	}
	return e.c.send(ctx, body)
}

// StopRetries makes each export from now on a single request, and ends
// one that waits to retry: for the last export, at exit, which should not
// wait out a backoff while the process could end.
func (e *SpanExporter) StopRetries() { e.c.stopRetries() }

// Shutdown stops the exporter: later exports fail.
func (e *SpanExporter) Shutdown(ctx context.Context) error {
	e.c.shutdown()
	return ctx.Err()
}
