// Package servicebus executes ServiceBusQueue and ServiceBusTopic actions:
// it sends the job's message to a Service Bus queue or topic with the
// shared access key from the job definition, the way Azure Scheduler's
// Service Bus actions did, over AMQP with azservicebus.
//
// # Usage
//
//	var reg action.Registry
//	sb := servicebus.Register(&reg, nil) // nil Options: {namespace}.servicebus.windows.net over AMQPS
//	defer sb.Close(context.Background())
//
// # Endpoint
//
// The action names only a namespace. By default it is reached at
// {namespace}.servicebus.windows.net, port 5671, over TLS. Options.Endpoint
// maps a namespace to another host[:port] (a sovereign cloud such as
// {namespace}.servicebus.chinacloudapi.cn, or a local peer), and
// Options.UseDevelopmentEmulator switches to plain amqp:// without TLS, as
// the Service Bus emulator and local test peers need; never use it for a
// real namespace.
//
// # Transport
//
// transportType NotSpecified, NetMessaging and AMQP are all accepted and all
// sent over AMQP 1.0: NetMessaging (SBMP) is retired and no Go client
// speaks it, and receivers cannot tell the difference.
//
// # What is sent
//
// The body is the message text as UTF-8 bytes in a single AMQP data
// section (not the .NET DataContract serialization a BrokeredMessage(string)
// used). brokeredMessageProperties map to the azservicebus.Message fields:
//
//	contentType             ContentType
//	correlationId           CorrelationID
//	label                   Subject
//	messageId               MessageID (default: the attempt's client request id)
//	partitionKey            PartitionKey
//	replyTo                 ReplyTo
//	replyToSessionId        ReplyToSessionID
//	scheduledEnqueueTimeUtc ScheduledEnqueueTime
//	sessionId               SessionID
//	timeToLive              TimeToLive
//	to                      To
//
// forcePersistence and viaPartitionKey have no counterpart and are accepted
// and ignored: Service Bus stores every message durably (forcePersistence
// only mattered for express entities over the retired NetMessaging
// protocol), and viaPartitionKey only applies to transactions sent through
// a transfer queue, which the executor never does.
//
// customMessageProperties become ApplicationProperties (string values),
// next to the scheduler's execution metadata under the names of the HTTP
// action's headers: x-ms-scheduler-jobid, x-ms-scheduler-jobcollectionid,
// x-ms-scheduler-expected-execution-time (RFC 3339, UTC),
// x-ms-scheduler-execution-tag (the same for every attempt of an
// occurrence, for dropping duplicates) and x-ms-client-request-id (new per
// attempt). A custom property with one of these names is overwritten by the
// metadata.
//
// # Client reuse
//
// One azservicebus.Client (one AMQP connection) is kept per namespace, key
// name and key (identified by its SHA-256), at most Options.MaxClients of
// them, least recently used closed first; each keeps one Sender (one AMQP
// link) per queue or topic for its lifetime. Nothing is opened per message.
// [Executor.Close] closes them all.
//
// # Errors
//
// When a job is put, the Executor, an [action.Validator], checks the
// namespace name (6-50 letters, digits and hyphens, starting with a letter
// and ending with a letter or digit), the queue or topic name (1-260
// letters, digits, '.', '-', '_' and '/'), the transport and
// authentication fields and the brokered message properties: a problem
// refuses the job with an error at its path
// (action.serviceBusQueueMessage.namespace). The same rules run again
// before each send, for a definition stored before they were checked.
//
// Invalid fields are reported before connecting, as *FieldError values
// naming the JSON path in the job (action.errorAction.serviceBusQueueMessage
// for the error action), marked [action.Permanent] (as is a message too
// large for the entity) so that the job's retry policy does not repeat them.
// Send failures become failed attempts with a message a person can act on:
// the key refused (401), the entity not found, the message too large for the
// entity, the namespace unreachable, no answer in time. The SDK retries only
// briefly within an attempt (Options.Retry) and each attempt is bounded by
// Options.Timeout, so a failure is reported at once instead of being retried
// silently until the scheduler's deadline; the job's retry policy decides
// what happens next.
package servicebus
