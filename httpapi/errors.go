package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	scheduler "github.com/jobclock/scheduler"
)

// ErrorResponse is the body of every error response: the ARM error
// envelope {"error": {...}}.
type ErrorResponse struct {
	// Error describes what went wrong.
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is an ARM error: a machine-readable code, a message for
// people, the request element at fault (a JSON path into the body such as
// "properties.recurrence.schedule.hours[1]", a query parameter such as
// "$top", or a path parameter such as "jobName"; empty when the error
// concerns the request as a whole) and, when several problems are reported
// at once, one detail per problem.
type ErrorDetail struct {
	Code    string        `json:"code"`
	Message string        `json:"message"`
	Target  string        `json:"target,omitempty"`
	Details []ErrorDetail `json:"details,omitempty"`
}

// The error codes the API returns.
const (
	CodeBadRequest              = "BadRequest"
	CodeMissingAPIVersion       = "MissingApiVersionParameter"
	CodeInvalidAPIVersion       = "InvalidApiVersionParameter"
	CodeAuthenticationFailed    = "AuthenticationFailed"
	CodeAuthorizationFailed     = "AuthorizationFailed"
	CodeResourceNotFound        = "ResourceNotFound"
	CodeMethodNotAllowed        = "MethodNotAllowed"
	CodeConflict                = "Conflict"
	CodeInvalidResourceLocation = "InvalidResourceLocation"
	CodeQuotaExceeded           = "QuotaExceeded"
	CodePreconditionFailed      = "PreconditionFailed"
	CodeRequestEntityTooLarge   = "RequestEntityTooLarge"
	CodeTooManyRequests         = "TooManyRequests"
	CodeInternalServerError     = "InternalServerError"
	CodeServiceUnavailable      = "ServiceUnavailable"
)

// apiError is an error response to be written.
type apiError struct {
	status     int
	detail     ErrorDetail
	retryAfter string // the Retry-After header, when not empty
}

func (e *apiError) Error() string { return e.detail.Code + ": " + e.detail.Message }

func newError(status int, code, target, format string, args ...any) *apiError {
	return &apiError{status: status, detail: ErrorDetail{Code: code, Message: fmt.Sprintf(format, args...), Target: target}}
}

func badRequest(target, format string, args ...any) *apiError {
	return newError(http.StatusBadRequest, CodeBadRequest, target, format, args...)
}

// validationError turns a validation failure of the engine into a 400
// response. prefix is prepended to paths that lack it ("properties" for a
// job definition validated without its envelope); rootPaths are the paths
// that mean "the document as a whole" and get no target.
func validationError(err error, prefix string) *apiError {
	var syn *scheduler.SyntaxError
	if errors.As(err, &syn) {
		return badRequest("", "The request body is not valid JSON: %s.", syn.Error())
	}
	verrs := scheduler.ValidationErrors(err)
	if len(verrs) == 0 {
		return badRequest("", "The request is invalid: %s.", trimPrefix(err.Error()))
	}
	details := make([]ErrorDetail, 0, len(verrs))
	for _, v := range verrs {
		path := v.Path
		isTag := path == "tags" || strings.HasPrefix(path, "tags.") || strings.HasPrefix(path, "tags[") // beside the properties
		if prefix != "" && path != prefix && !strings.HasPrefix(path, prefix+".") && !isTag {
			path = prefix + "." + path
		}
		target := path
		msg := v.Reason
		if v.Value != "" {
			msg = v.Value + " " + msg
		}
		switch path {
		case "job", "collection", prefix + ".job", prefix + ".collection":
			target = ""
			if strings.HasPrefix(msg, "is ") {
				msg = "The request body " + msg
			} else {
				msg = "The request body is invalid: " + msg
			}
		default:
			msg = path + ": " + msg
		}
		details = append(details, ErrorDetail{Code: CodeBadRequest, Message: msg, Target: target})
	}
	return detailsError(details)
}

// detailsError returns the 400 response of problems (at least one): the
// problem itself when there is one, otherwise a BadRequest whose message
// lists them all, with one entry per problem in details.
func detailsError(details []ErrorDetail) *apiError {
	if len(details) == 1 {
		return &apiError{status: http.StatusBadRequest, detail: details[0]}
	}
	msgs := make([]string, len(details))
	for i, d := range details {
		msgs[i] = d.Message
	}
	return &apiError{status: http.StatusBadRequest, detail: ErrorDetail{
		Code:    CodeBadRequest,
		Message: fmt.Sprintf("The request has %d errors: %s", len(details), strings.Join(msgs, "; ")),
		Details: details,
	}}
}

// trimPrefix removes the engine's "scheduler: " prefixes from a message.
func trimPrefix(s string) string { return strings.ReplaceAll(s, "scheduler: ", "") }
