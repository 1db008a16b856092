// Package tracectx carries an attempt's trace to the executors without
// OpenTelemetry: a context holds a [Span], which starts the executor's
// client or producer span as its child and gives the W3C trace context to
// send on (traceparent, tracestate).
//
// Two kinds of Span reach the executors. Package telemetry (the opt-in
// module github.com/jobclock/scheduler/telemetry) puts its OpenTelemetry
// span of the attempt into the context with [With]; the Scheduler puts an
// occurrence's stored trace context there with [WithRemote] whether or not
// anything traces, so that a trace begun elsewhere (RunJob's caller, an
// earlier attempt on another instance) is still passed on. Nothing else
// in the library imports OpenTelemetry.
package tracectx

import (
	"context"
	"fmt"
	"log/slog"
)

// Span is a span that a context carries for the executors.
type Span interface {
	// Start starts a span of kind named name in instrumentation scope
	// scope, a child of this one, with attrs, and returns the context
	// to make the call with (ctx with whatever the implementation needs;
	// [Start] adds the child itself) and the child.
	Start(ctx context.Context, scope, name string, kind Kind, attrs []Attr) (context.Context, Span)
	// End ends the span with attrs added: a success when err is nil,
	// else with status Error, err's text as its description and
	// error.type errType.
	End(err error, errType string, attrs []Attr)
	// TraceContext returns the span's W3C traceparent and tracestate.
	TraceContext() (traceparent, tracestate string)
}

// Kind is the kind of a span, as OpenTelemetry names them.
type Kind int

// The kinds of spans the executors start.
const (
	Client Kind = iota + 1
	Producer
)

// Attr is an attribute of a span: a string, or an integer when IsInt.
type Attr struct {
	Key   string
	Str   string
	Int   int64
	IsInt bool
}

// String returns a string attribute.
func String(key, value string) Attr { return Attr{Key: key, Str: value} }

// Int returns an integer attribute.
func Int(key string, value int) Attr { return Attr{Key: key, Int: int64(value), IsInt: true} }

type spanKey struct{}

// With returns ctx carrying span.
func With(ctx context.Context, span Span) context.Context {
	return context.WithValue(ctx, spanKey{}, span)
}

// From returns the span ctx carries, or nil.
func From(ctx context.Context) Span {
	s, _ := ctx.Value(spanKey{}).(Span)
	return s
}

// Start starts a child of the span in ctx (see [Span.Start]) and returns
// ctx carrying the child, and the child. Without a span in ctx it returns
// ctx and nil, at the cost of one context lookup: an executor called
// without a trace makes no span and allocates nothing.
func Start(ctx context.Context, scope, name string, kind Kind, attrs ...Attr) (context.Context, Span) {
	parent := From(ctx)
	if parent == nil {
		return ctx, nil
	}
	ctx, child := parent.Start(ctx, scope, name, kind, attrs)
	return With(ctx, child), child
}

// End ends span, which may be nil; errType defaults to err's Go type.
func End(span Span, err error, errType string, attrs ...Attr) {
	if span == nil {
		return
	}
	if err != nil && errType == "" {
		errType = fmt.Sprintf("%T", err)
	}
	span.End(err, errType, attrs)
}

// Parent returns the W3C traceparent and tracestate of the span ctx
// carries; both are empty when it carries none.
func Parent(ctx context.Context) (traceparent, tracestate string) {
	if s := From(ctx); s != nil {
		return s.TraceContext()
	}
	return "", ""
}

// WithRemote returns ctx carrying the trace context traceparent and
// tracestate received from elsewhere, as a Span that records nothing:
// its children are itself, so an executor passes that trace context on.
// It returns ctx unchanged when traceparent is not a valid W3C
// traceparent.
func WithRemote(ctx context.Context, traceparent, tracestate string) context.Context {
	p, ok := Normalize(traceparent)
	if !ok {
		return ctx
	}
	return With(ctx, remote{p, tracestate})
}

// remote is a trace context received from elsewhere.
type remote struct{ parent, state string }

func (r remote) Start(ctx context.Context, _, _ string, _ Kind, _ []Attr) (context.Context, Span) {
	return ctx, r
}
func (remote) End(error, string, []Attr)                        {}
func (r remote) TraceContext() (traceparent, tracestate string) { return r.parent, r.state }

// Normalize checks a W3C traceparent (version-traceid-spanid-flags, lower
// case hexadecimal, ids not all zero, nothing more for version 00) and
// returns it as OpenTelemetry's propagator writes it: version 00, with the
// sampled and random flags only.
func Normalize(traceparent string) (string, bool) {
	p := traceparent
	if len(p) < 55 || p[2] != '-' || p[35] != '-' || p[52] != '-' || !hex(p[:2]) || p[:2] == "ff" ||
		!hex(p[3:35]) || !hex(p[36:52]) || !hex(p[53:55]) || zeros(p[3:35]) || zeros(p[36:52]) {
		return "", false
	}
	flags := unhex(p[53])<<4 | unhex(p[54])
	if p[:2] == "00" && (len(p) > 55 || flags > 3) || len(p) > 55 && p[55] != '-' {
		return "", false
	}
	const digits = "0123"
	out := p[2:53] + "0" + digits[flags&3:flags&3+1]
	if p[:2] == "00" && len(p) == 55 && p[53:55] == out[51:] {
		return p, true // as written: no allocation
	}
	return "00" + out, true
}

func hex(s string) bool {
	for i := range len(s) {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func zeros(s string) bool {
	for i := range len(s) {
		if s[i] != '0' {
			return false
		}
	}
	return true
}

func unhex(c byte) byte {
	if c >= 'a' {
		return c - 'a' + 10
	}
	return c - '0'
}

// LogHandler returns a slog.Handler that adds the trace_id and span_id of
// the span in a record's context (as the *Context logging methods pass it)
// to the record, then hands it to h, so that log records written about a
// traced attempt or request join its trace. Records whose context carries
// no span, or only a trace context received from elsewhere (WithRemote),
// or that have a trace_id already, pass unchanged.
func LogHandler(h slog.Handler) slog.Handler {
	if lh, ok := h.(*logHandler); ok {
		return lh
	}
	return &logHandler{h}
}

type logHandler struct{ h slog.Handler }

func (l *logHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return l.h.Enabled(ctx, level)
}

func (l *logHandler) Handle(ctx context.Context, r slog.Record) error {
	if ctx != nil {
		if s := From(ctx); s != nil {
			if _, received := s.(remote); !received {
				if p, _ := s.TraceContext(); len(p) >= 52 && !HasTraceID(r) {
					r = r.Clone()
					r.AddAttrs(slog.String("trace_id", p[3:35]), slog.String("span_id", p[36:52]))
				}
			}
		}
	}
	return l.h.Handle(ctx, r)
}

func (l *logHandler) WithAttrs(as []slog.Attr) slog.Handler { return &logHandler{l.h.WithAttrs(as)} }
func (l *logHandler) WithGroup(name string) slog.Handler    { return &logHandler{l.h.WithGroup(name)} }

// HasTraceID reports whether r has a trace_id attribute already.
func HasTraceID(r slog.Record) bool {
	found := false
	r.Attrs(func(a slog.Attr) bool {
		found = a.Key == "trace_id"
		return !found
	})
	return found
}
