// Package http executes the Http and Https actions of jobs: it sends the
// action's request and reports whether the attempt succeeded.
//
// The scheduler registers one Executor, made by New, for both action types:
//
//	ex := http.New(nil) // nil *Options: all defaults
//	defer ex.Close()
//	registry.Register(action.HTTP, ex)
//	registry.Register(action.HTTPS, ex)
//
// # Request
//
// The method, uri, headers and body come from the action's "request"
// object. The method is sent in upper case; the uri's scheme (http or https)
// decides the protocol. A "Host" header sets the request's host; other
// headers are sent as given, and a User-Agent of DefaultUserAgent is added
// when the action sets none. No Content-Type is added to a body: set one in
// "headers". Every request also carries these headers, written in lower
// case on the wire:
//
//	x-ms-scheduler-jobid                    Request.JobID()
//	x-ms-scheduler-jobcollectionid          Request.CollectionID
//	x-ms-scheduler-expected-execution-time  Request.ExpectedTime, RFC 3339 in UTC
//	x-ms-scheduler-execution-tag            Request.ExecutionTag() (same for every attempt of an occurrence)
//	x-ms-client-request-id                  Request.ClientRequestID() (new for every attempt)
//
// They cannot be overridden: an action header with one of these names, in
// any case, is dropped in favour of the scheduler's value, so receivers can
// trust them for de-duplication.
//
// # Outcome
//
// An attempt succeeds on a 2xx response and fails on anything else.
// Redirects are not followed: a 3xx response is a failure, whatever the
// Client in Options says. A connection error, a TLS error, a timeout and a
// failed token request are failures too. Execute returns a nil error on
// success; on failure it returns a *StatusError (non-2xx response) or a
// *RequestError (no response), and in both cases a Result whose Message
// explains the outcome for the job's history. Its first line is the
// outcome, the status and the host, the error's text after the outcome, so
// that the history says the status once; a response's body follows on a
// line "Body: ...", then its headers, one per line:
//
//	Failed: 404 Not Found from host 'example.com'
//	Body: no such page
//	Headers:
//	  Content-Type: text/plain
//	  Date: Mon, 05 Jan 2026 09:00:00 GMT
//
//	Failed: no response from host 'example.com': dial tcp 93.184.215.14:443: connect: connection refused
//	Failed: no response from host 'example.com': timed out after 1m0s: context deadline exceeded
//
// An attempt that fails before anything is sent (an unusable pfx, a failed
// token request) names what failed by its full JSON path in the job
// ("action.errorAction" for the error action's), and says that nothing
// was sent:
//
//	Failed: action.request.authentication.pfx: is not a usable PKCS#12 file: ...; nothing was sent to host 'example.com'
//	Failed: action.request.authentication: token request to 'login.microsoftonline.com' failed: ...; nothing was sent to host 'example.com'
//
// A success reads the same way ("Completed: 200 OK from host ..."). The
// host includes the port when the uri has one. The body in the message is
// cut to Options.MaxMessageBody bytes (2,048 by default) at a UTF-8
// character boundary and then marked "... (truncated)"; its CRLF line
// ends are written as LF, invalid UTF-8 as U+FFFD, and an empty body
// leaves out the Body line. Response headers are listed sorted, up to 4
// KiB. (Azure Scheduler wrote "Http Action - Response from host ...
// Response Headers: ...\r\n Body: ...", with raw CRLFs and the body
// last.) The
// executor never reads a body without bound: after the part it keeps it
// reads and discards up to 256 KiB more, so that the connection can be
// reused, and closes the connection of a longer body.
//
// # Timeouts
//
// Each attempt runs under the action's own "timeout", else Options.Timeout
// (60 s by default), and under the context passed to Execute, whichever
// ends first; the message says which
// ("timed out after 1m0s", "timed out (the attempt's deadline passed)", or
// "canceled"). The timeout covers any token request of the attempt. The
// status alone decides the outcome: a 2xx response whose body is cut short
// by the timeout still succeeds, and its message notes that reading the
// body failed.
//
// # Authentication
//
// The "authentication" object of the request selects one of:
//
//   - Basic: an Authorization header with username and password. It
//     replaces an Authorization header of the action, as do the other
//     types.
//   - ClientCertificate: pfx is the base64 of a PKCS#12 (.pfx/.p12) file and
//     password opens it; the leaf certificate, its private key and any chain
//     in the file are presented in the TLS handshake. The uri must be https.
//     PKCS#12 files are decoded with software.sslmate.com/src/go-pkcs12,
//     which reads both the legacy (3DES/RC2) files Windows exported for
//     years and modern AES/PBKDF2 ones. Parsed certificates are cached by a
//     SHA-256 hash of pfx and password, each with its own transport (a
//     clone of the Client's transport with the certificate in its TLS
//     configuration) and hence its own connection pool; at most
//     Options.MaxCertificates are kept, and the least recently used one is
//     dropped with its idle connections (a connection still in use is
//     closed after at most 90 s idle). A wrong password or a malformed
//     pfx fails the attempt with a *FieldError naming the field. The
//     iteration counts of a file's key derivations are chosen by whoever
//     made it, so before deriving anything the executor adds them up (the
//     MAC, the encrypted contents, the encrypted key, also when that key
//     sits inside an encrypted content) and refuses a file asking for more
//     than MaxPfxIterations (1,000,000, about a quarter of a second of one
//     core); CheckPfxWork does the same without the password, for the
//     parts readable without it, when a job is created. Use
//     ReadCertificate to show a certificate's thumbprint, subject and
//     expiry in place of the secret pfx; it keeps the outcomes of the
//     last 64 certificates it read (not their keys), so that a job put is
//     read once, to check it (ValidateRequest) and to describe it.
//   - ActiveDirectoryOAuth: a client-credentials access token is sent as
//     "Authorization: Bearer". It comes from the Azure AD v1 endpoint
//     {authority}/{tenant}/oauth2/token with grant_type=client_credentials,
//     client_id, client_secret and resource set to audience. The v1
//     endpoint is used because "audience" is a resource URI (Azure
//     Scheduler's documentation sets it to
//     https://management.core.windows.net/), which v1 takes as it is; the
//     v2 endpoint would need it rewritten into a scope. authority is the
//     action's "authority", else Options.Authority, else DefaultAuthority.
//     Tokens are cached per endpoint, client id, audience and a hash of the
//     secret, until expires_in (or expires_on) less Options.TokenRefreshMargin
//     (5 minutes by default, at most half the token's lifetime); a token
//     without a stated lifetime is not cached. Concurrent attempts with the
//     same key share one token request. A token endpoint that refuses fails
//     the attempt with the endpoint's error and error_description.
//   - NotSpecified, or no authentication object: nothing is added.
//
// Secrets (passwords, the client secret, the pfx, access tokens) never
// appear in a Result message or an error: secrets of 4 bytes or more are
// replaced by "***" even when a server echoes them back.
//
// # Input errors
//
// Execute does not panic on any input. A nil request or action gives an
// error; a missing or malformed field gives a *FieldError whose Path is the
// JSON path within the action ("request.uri",
// "request.authentication.pfx"), marked [action.Permanent] so that the
// job's retry policy does not repeat an attempt that cannot succeed.
// ValidateRequest reports the same problems without sending anything; the
// Executor, an [action.Validator], runs it when a job is put, so that a
// request Execute would refuse, such as a pfx that is not a PKCS#12 file
// or does not open with its password, is refused then.
package http
