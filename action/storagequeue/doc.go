// Package storagequeue executes StorageQueue actions: it puts the job's
// message on an Azure Storage queue, authenticating with the SAS token from
// the job definition, the way Azure Scheduler's storage queue action did.
//
// # Usage
//
//	var reg action.Registry
//	sq := storagequeue.Register(&reg, nil) // nil Options: Azure public cloud, text as given
//	defer sq.Close()
//
// # Endpoint
//
// The action names only a storage account. By default the queue service is
// https://{account}.queue.core.windows.net/ ([DefaultEndpoint]). Options.Endpoint
// maps an account to another service URL: a sovereign cloud
// ("https://{account}.queue.core.chinacloudapi.cn/", built by [HostSuffix]),
// or the path-style URL of the Azurite emulator, for which [PathStyle]
// builds the function (http://127.0.0.1:10001/devstoreaccount1/).
//
// # What is sent
//
// By default the message text is sent as given, which is what the current
// Azure SDKs do. Two options change that, for receivers written against the
// original service:
//
//   - Options.Envelope wraps the text in the XML StorageQueueMessage document
//     Azure Scheduler posted, with the elements ExecutionTag,
//     ClientRequestId, ExpectedExecutionTime (RFC 3339, UTC),
//     SchedulerJobId, SchedulerJobCollectionId, Region and Message, in that
//     order. Without the envelope a queue message has nowhere to carry the
//     scheduler's execution metadata, so receivers that drop duplicate
//     attempts by execution tag need it.
//   - Options.Base64 base64-encodes the (possibly enveloped) text, as the
//     classic .NET storage SDK did by default and as Azure Functions' queue
//     trigger expects by default. Only base64 can carry text that XML cannot
//     (control characters): without it such a message is refused before
//     sending.
//
// The enqueue request carries the attempt's client request id in the
// x-ms-client-request-id header, so the storage service's logs can be
// matched with the job's history.
//
// # Validation and errors
//
// When a job is put, the Executor, an [action.Validator], checks the queue
// name (3-63 lowercase letters, digits and single hyphens, starting and
// ending with a letter or digit) and the account name (3-24 lowercase
// letters and digits): a bad one refuses the job with an error at its path
// (action.queueMessage.queueName). Before anything is sent, the names again
// (for a definition stored before they were checked at put time), the SAS
// token (a query string with a sig parameter, an optional leading "?", not
// past its se expiry) and the encoded message size (at most 64 KiB, the
// service's limit) are checked; a problem is a failed attempt whose error is
// a *FieldError naming the JSON path at fault in the job
// (action.errorAction.queueMessage for the error action), marked
// [action.Permanent] so that the job's retry policy does not repeat it (the
// same goes for a message the service finds too large). Service answers are
// turned into messages a person can act on: a refused SAS token (403), a
// missing queue (404), a message the service finds too large (413), an
// unreachable endpoint. The underlying *azcore.ResponseError stays reachable
// with errors.As.
//
// # Client reuse
//
// Queue clients are cached per account, queue and SAS token (at most
// Options.MaxClients, least recently used dropped first) and share one HTTP
// transport, so repeated occurrences reuse connections. [Executor.Close]
// drops the cache and closes idle connections.
package storagequeue
