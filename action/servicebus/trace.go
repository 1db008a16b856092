package servicebus

import (
	"context"
	"errors"
	"net"
	"strconv"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"

	"github.com/jobclock/scheduler/internal/tracectx"
)

// scope is the instrumentation scope of the executor's spans.
const scope = "github.com/jobclock/scheduler/action/servicebus"

// The application properties that carry the W3C trace context of the
// message: Diagnostic-Id as the Azure SDKs write it (the traceparent
// value), and traceparent and tracestate as OpenTelemetry's messaging
// conventions name them.
const (
	PropertyDiagnosticID = "Diagnostic-Id"
	PropertyTraceparent  = "traceparent"
	PropertyTracestate   = "tracestate"
)

// spanAttributes describes a send with the OpenTelemetry messaging
// conventions.
func spanAttributes(host, entity string, msg *azservicebus.Message) []tracectx.Attr {
	attrs := []tracectx.Attr{
		tracectx.String("messaging.system", "servicebus"),
		tracectx.String("messaging.operation.type", "send"),
		tracectx.String("messaging.operation.name", "send"),
		tracectx.String("messaging.destination.name", entity),
	}
	if h, p, err := net.SplitHostPort(host); err == nil {
		n, _ := strconv.Atoi(p)
		attrs = append(attrs, tracectx.String("server.address", h), tracectx.Int("server.port", n))
	} else {
		attrs = append(attrs, tracectx.String("server.address", host))
	}
	if msg.MessageID != nil {
		attrs = append(attrs, tracectx.String("messaging.message.id", *msg.MessageID))
	}
	attrs = append(attrs, tracectx.Int("messaging.message.body.size", len(msg.Body)))
	return attrs
}

// setTraceProperties puts the trace context of ctx into the message's
// application properties, replacing properties of those names that the
// action set.
func setTraceProperties(ctx context.Context, msg *azservicebus.Message) {
	parent, state := tracectx.Parent(ctx)
	if parent == "" {
		return
	}
	if msg.ApplicationProperties == nil {
		msg.ApplicationProperties = make(map[string]any, 3)
	}
	msg.ApplicationProperties[PropertyDiagnosticID] = parent
	msg.ApplicationProperties[PropertyTraceparent] = parent
	delete(msg.ApplicationProperties, PropertyTracestate)
	if state != "" {
		msg.ApplicationProperties[PropertyTracestate] = state
	}
}

// sendErrorType is the error.type of a failed send: the Service Bus error
// code when there is one.
func sendErrorType(err error) string {
	var sbErr *azservicebus.Error
	if errors.As(err, &sbErr) && sbErr.Code != "" {
		return string(sbErr.Code)
	}
	return ""
}
