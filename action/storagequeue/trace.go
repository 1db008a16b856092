package storagequeue

import (
	"errors"
	"net/url"
	"strconv"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/internal/tracectx"
)

// scope is the instrumentation scope of the executor's spans.
const scope = "github.com/jobclock/scheduler/action/storagequeue"

// messagingSystem is the messaging.system of the spans: OpenTelemetry's
// conventions list no value for Azure Storage queues.
const messagingSystem = "azure.storage.queue"

// spanAttributes describes an enqueue with the OpenTelemetry messaging
// conventions. endpoint is the queue service URL of the account.
func spanAttributes(endpoint string, m *action.StorageQueueMessage) []tracectx.Attr {
	attrs := []tracectx.Attr{
		tracectx.String("messaging.system", messagingSystem),
		tracectx.String("messaging.operation.type", "send"),
		tracectx.String("messaging.operation.name", "send"),
		tracectx.String("messaging.destination.name", m.QueueName),
		tracectx.String("jobclock.storage.account", m.StorageAccount),
	}
	if u, err := url.Parse(endpoint); err == nil && u.Hostname() != "" {
		attrs = append(attrs, tracectx.String("server.address", u.Hostname()))
		if p := u.Port(); p != "" {
			n, _ := strconv.Atoi(p)
			attrs = append(attrs, tracectx.Int("server.port", n))
		}
	}
	return attrs
}

// enqueueErrorType is the error.type of a failed enqueue: the storage
// service's error code when it answered with one.
func enqueueErrorType(err error) string {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		if re.ErrorCode != "" {
			return re.ErrorCode
		}
		return strconv.Itoa(re.StatusCode)
	}
	return ""
}
