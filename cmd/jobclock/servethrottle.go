package main

import (
	"errors"
	"flag"
	"time"

	"github.com/jobclock/scheduler/httpapi"
)

// serveThrottle are the request budget flags of serve.
type serveThrottle struct {
	reads, writes int
	window        time.Duration
	off           bool
}

func addThrottleFlags(fs *flag.FlagSet) *serveThrottle {
	t := new(serveThrottle)
	fs.IntVar(&t.reads, "throttle-reads", httpapi.DefaultReadsPerWindow, "read requests (GET) each caller may make per -throttle-window")
	fs.IntVar(&t.writes, "throttle-writes", httpapi.DefaultWritesPerWindow, "write requests (PUT, PATCH, DELETE, POST) each caller may make per -throttle-window")
	fs.DurationVar(&t.window, "throttle-window", httpapi.DefaultThrottleWindow, "the time over which a caller's budgets refill")
	fs.BoolVar(&t.off, "no-throttle", false, "do not limit requests (no 429 responses, no rate limit headers)")
	return t
}

// options returns the handler's Throttle, or a usage error.
func (t *serveThrottle) options() (*httpapi.Throttle, error) {
	switch {
	case t.off:
		return &httpapi.Throttle{Disabled: true}, nil
	case t.reads < 1:
		return nil, errors.New("-throttle-reads must be at least 1 (use -no-throttle to turn throttling off)")
	case t.writes < 1:
		return nil, errors.New("-throttle-writes must be at least 1 (use -no-throttle to turn throttling off)")
	case t.window <= 0:
		return nil, errors.New("-throttle-window must be positive")
	}
	return &httpapi.Throttle{ReadsPerWindow: t.reads, WritesPerWindow: t.writes, Window: t.window}, nil
}

// serveAdmission are the flags of the API's admission control.
type serveAdmission struct {
	reads, writes int
	wait          time.Duration
	off           bool
}

func addAdmissionFlags(fs *flag.FlagSet) *serveAdmission {
	a := new(serveAdmission)
	fs.IntVar(&a.reads, "api-reads", httpapi.DefaultAdmissionReads, "API read operations (GET) served at once, across callers")
	fs.IntVar(&a.writes, "api-writes", httpapi.DefaultAdmissionWrites, "API write operations (PUT, PATCH, DELETE, POST) served at once, across callers")
	fs.DurationVar(&a.wait, "api-wait", httpapi.DefaultAdmissionWait, "how long an API operation waits for its turn before it is answered 429")
	fs.BoolVar(&a.off, "no-api-limit", false, "serve every API operation at once (API load may then delay the jobs)")
	return a
}

// options returns the handler's Admission, or a usage error.
func (a *serveAdmission) options() (*httpapi.Admission, error) {
	switch {
	case a.off:
		return &httpapi.Admission{Disabled: true}, nil
	case a.reads < 1:
		return nil, errors.New("-api-reads must be at least 1 (use -no-api-limit to serve every operation at once)")
	case a.writes < 1:
		return nil, errors.New("-api-writes must be at least 1 (use -no-api-limit to serve every operation at once)")
	case a.wait <= 0:
		return nil, errors.New("-api-wait must be positive")
	}
	return &httpapi.Admission{Reads: a.reads, Writes: a.writes, Wait: a.wait}, nil
}

// serveSignIn are the flags of the limit of failed authentications: the
// dashboard's sign-ins and the REST API's requests share one budget.
type serveSignIn struct {
	perAddress, overall int
	window, wait        time.Duration
	off                 bool
}

func addSignInFlags(fs *flag.FlagSet) *serveSignIn {
	s := new(serveSignIn)
	fs.IntVar(&s.perAddress, "signin-failures", httpapi.DefaultAuthFailures, "failed dashboard sign-ins and API authentications each client address may make per -signin-window")
	fs.IntVar(&s.overall, "signin-failures-overall", httpapi.DefaultAuthFailuresOverall, "failed dashboard sign-ins and API authentications all addresses together may make per -signin-window before requests wait in line (and, apart, addresses seen authenticating in the last day)")
	fs.DurationVar(&s.window, "signin-window", httpapi.DefaultAuthFailureWindow, "the time over which the sign-in budgets refill")
	fs.DurationVar(&s.wait, "signin-wait", httpapi.DefaultAuthFailureWait, "how long a sign-in or API request from an address not seen authenticating waits for its turn once -signin-failures-overall is used up")
	fs.BoolVar(&s.off, "no-signin-limit", false, "do not limit failed dashboard sign-ins and API authentications")
	return s
}

// options returns the limit of failed authentications, or a usage error.
func (s *serveSignIn) options() (*httpapi.AuthFailureLimit, error) {
	switch {
	case s.off:
		return &httpapi.AuthFailureLimit{Disabled: true}, nil
	case s.perAddress < 1:
		return nil, errors.New("-signin-failures must be at least 1 (use -no-signin-limit to turn the limit off)")
	case s.overall < 1:
		return nil, errors.New("-signin-failures-overall must be at least 1 (use -no-signin-limit to turn the limit off)")
	case s.window <= 0:
		return nil, errors.New("-signin-window must be positive")
	case s.wait <= 0:
		return nil, errors.New("-signin-wait must be positive")
	}
	return &httpapi.AuthFailureLimit{PerAddress: s.perAddress, Overall: s.overall, Window: s.window, Wait: s.wait}, nil
}
