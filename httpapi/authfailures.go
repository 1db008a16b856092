package httpapi

import (
	"net/http"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/jobclock/scheduler/internal/budget"
	"github.com/jobclock/scheduler/internal/lru"
)

// Defaults of AuthFailureLimit.
const (
	// DefaultAuthFailures is how many failed authentications a client
	// address may make per DefaultAuthFailureWindow.
	DefaultAuthFailures = 10
	// DefaultAuthFailuresOverall is how many failed authentications all
	// addresses together may make per DefaultAuthFailureWindow before
	// requests wait in line; known addresses have a budget of as many of
	// their own.
	DefaultAuthFailuresOverall = 100
	// DefaultAuthFailureWindow is how long a used-up budget of failed
	// authentications takes to refill completely.
	DefaultAuthFailureWindow = 15 * time.Minute
	// DefaultAuthFailureWait is how long a request waits for the overall
	// budget of failed authentications to have room.
	DefaultAuthFailureWait = 20 * time.Second
)

// knownFor is how long an address stays known after a request from it
// authenticated: its requests take nothing from the overall budget.
const knownFor = 24 * time.Hour

// maxAuthFailureAddresses bounds the addresses whose budgets of failed
// authentications are kept; the least recently seen one's is dropped
// beyond it (it starts full again when the address comes back).
const maxAuthFailureAddresses = 10_000

// AuthFailureLimit bounds failed authentications, so that a token cannot
// be guessed as fast as a client can send guesses.
//
// Each request whose credentials the Authenticator refuses takes one from
// the budget of the client's address (the host of the request's
// RemoteAddr; an IPv6 client's /64 network, which one host commonly holds
// whole) and one from an overall budget (below); a request that
// authenticates takes nothing. Each budget refills evenly over
// Window.
//
// While its address's budget has less than one left, a request is
// refused without its credentials being checked, valid ones included: a
// guesser learns nothing, and a caller with valid credentials from that
// address is served again once the budget refills. The REST API then
// answers 429 TooManyRequests, the dashboard's sign-in form 429 Too Many
// Requests, both with a Retry-After header (whole seconds until one is
// there again). Behind a proxy every caller has the proxy's address, so
// they share one budget.
//
// The overall budget bounds the guesses of many addresses together: once
// it is used up, requests wait their turn, in one line in order of
// arrival, and each is checked when the budget has room for one more
// failure (every Window/Overall, 9s by default), right and wrong
// credentials alike, so guessing from any number of addresses slows to
// that rate. A request that would wait longer than Wait is refused as
// above, unchecked, with Wait as its Retry-After. The line does not tell
// a valid token from a guess: while guesses from many addresses keep it
// longer than Wait, a caller with a valid token from an address that is
// not known is refused as often as the guesses are.
//
// An address is known when a request from it authenticated (with any
// token) within the last day; the process keeps the last 10,000 such
// addresses, in memory only, so a restart forgets them. The failures of
// known addresses take from an overall budget of their own, as large as
// Overall, and do not wait in the line: operators and programs that use
// the API from their usual addresses are served at once however many
// guesses arrive from elsewhere. Once that budget is used up as well (a
// token holder could make many addresses known and guess from each),
// requests from known addresses wait in the line as the others do. So
// the failures of all addresses together are bounded by the two budgets:
// twice Overall per Window in the long run (at most twice that within
// one Window, when both budgets start full); and each address's by its
// own budget.
type AuthFailureLimit struct {
	// PerAddress is how many failed authentications one address may make
	// per Window. Zero or less means DefaultAuthFailures (10).
	PerAddress int
	// Overall is how many failed authentications all addresses together
	// may make per Window before requests wait in line, and apart from
	// them how many known addresses together may make. Zero or less means
	// DefaultAuthFailuresOverall (100).
	Overall int
	// Window is how long an empty budget takes to refill completely.
	// Zero or less means DefaultAuthFailureWindow (15m).
	Window time.Duration
	// Wait is the longest a request waits for its turn once the overall
	// budget is used up. Zero or less means DefaultAuthFailureWait (20s).
	Wait time.Duration
	// Disabled turns the limit off: every request's credentials are
	// checked.
	Disabled bool
}

// AuthFailures is a budget of failed authentications, as an
// [AuthFailureLimit] sets it. Give one AuthFailures to every surface that
// checks the same credentials (the REST API's Options.AuthFailures and the
// dashboard's), so that a failure at one counts at all of them: a guesser
// then has one budget, not one per surface. An AuthFailures is safe for
// concurrent use. Create it with NewAuthFailures.
type AuthFailures struct {
	perAddress *budget.Budgets[string]   // nil: no limit
	overall    *budget.Budgets[struct{}] // nil: no limit
	// knownOverall is the overall budget of the failures from known
	// addresses, as large as overall; when it is used up, they wait in
	// overall's line as others do.
	knownOverall *budget.Budgets[struct{}]
	wait         time.Duration // Wait
	// known holds, for each address from which a request authenticated,
	// when it last did (Unix nanoseconds).
	known *lru.Cache[string, *atomic.Int64]
}

// NewAuthFailures returns a budget of failed authentications with the
// limit l. A nil l means the defaults of [AuthFailureLimit] (10 per
// address and 100 in all per 15 minutes, and 100 more from known
// addresses; a wait of up to 20s for a turn beyond the overall budget).
func NewAuthFailures(l *AuthFailureLimit) *AuthFailures {
	var o AuthFailureLimit
	if l != nil {
		o = *l
	}
	if o.Disabled {
		return &AuthFailures{}
	}
	if o.PerAddress <= 0 {
		o.PerAddress = DefaultAuthFailures
	}
	if o.Overall <= 0 {
		o.Overall = DefaultAuthFailuresOverall
	}
	if o.Window <= 0 {
		o.Window = DefaultAuthFailureWindow
	}
	if o.Wait <= 0 {
		o.Wait = DefaultAuthFailureWait
	}
	return &AuthFailures{perAddress: budget.New[string](o.PerAddress, o.Window, maxAuthFailureAddresses),
		overall: budget.New[struct{}](o.Overall, o.Window, 1), wait: o.Wait,
		knownOverall: budget.New[struct{}](o.Overall, o.Window, 1),
		known:        lru.New[string, *atomic.Int64](maxAuthFailureAddresses, nil)}
}

// TooManyFailuresError is the error of [AuthFailures.Authenticate] when
// the budget of failed authentications is used up: the credentials were
// not checked.
type TooManyFailuresError struct {
	// RetryAfter is how long until the address's budget has room for one
	// more failure, or, when the request found no turn beyond the overall
	// budget, the limit's Wait.
	RetryAfter time.Duration
}

func (e *TooManyFailuresError) Error() string {
	return "httpapi: too many failed authentications; try again in " + budget.InWords(e.RetryAfter)
}

// Authenticate checks the credentials of r with a, within the budget: it
// takes a failure from the budgets of r's client address and of all
// addresses before a checks them, so that requests at once cannot fail
// beyond the budgets, and gives it back when a accepts them. A request
// from a known address (one that authenticated within the last day),
// while its budget and the known addresses' overall budget have room, is
// checked first and charged after a refuses it instead, so that the
// requests at once of a busy client are not refused for one another's
// checks in flight (its failures at once may go past its budget by as
// many as it sends at once, all charged). When the
// address's budget has none left, or the overall one has none within the
// limit's Wait (or before r's context ends), it returns a
// *TooManyFailuresError without calling a. Otherwise it returns what a
// returns; a nil principal without an error counts as a failure.
//
// A request that presents no credentials, as an Authenticator that is a
// [CredentialsPresenter] tells, takes nothing and is checked at once: it
// cannot be a guess (a browser asking /favicon.ico, a load balancer's
// health check). Without that interface every request a refuses counts.
func (f *AuthFailures) Authenticate(r *http.Request, a Authenticator) (*Principal, error) {
	if f.perAddress == nil {
		return a.Authenticate(r)
	}
	if cp, ok := a.(CredentialsPresenter); ok && !cp.CredentialsPresent(r) {
		return a.Authenticate(r)
	}
	addr, now := clientAddress(r), time.Now()
	last, known := f.known.Get(addr)
	known = known && now.Sub(time.Unix(0, last.Load())) <= knownFor
	if known {
		// An address from which a request authenticated lately is
		// checked first and charged a failure after it, so that its
		// requests at once (a busy client, the clients behind one
		// proxy) are not refused for the failures their checks in
		// flight might have been. Its failures at once can go past its
		// budget by as many as it sends at once, and are charged to it
		// (and to the known addresses' overall budget) all the same.
		if ok, wait := f.perAddress.Has(addr, now); !ok {
			return nil, &TooManyFailuresError{RetryAfter: wait}
		}
		if ok, _ := f.knownOverall.Has(struct{}{}, now); ok {
			p, err := a.Authenticate(r)
			if err == nil && p != nil {
				last.Store(time.Now().UnixNano())
				return p, nil
			}
			now = time.Now()
			f.perAddress.Charge(addr, now)
			f.knownOverall.Charge(struct{}{}, now)
			return p, err
		}
	}
	if ok, _, wait := f.perAddress.Take(addr, now); !ok {
		return nil, &TooManyFailuresError{RetryAfter: wait}
	}
	overall := f.overall
	if known {
		if ok, _, _ := f.knownOverall.Take(struct{}{}, now); ok {
			overall = f.knownOverall
		}
	}
	if overall == f.overall && !f.overall.Wait(r.Context(), struct{}{}, f.wait) {
		f.perAddress.Give(addr, time.Now())
		return nil, &TooManyFailuresError{RetryAfter: f.wait}
	}
	p, err := a.Authenticate(r)
	if err == nil && p != nil {
		now = time.Now()
		f.perAddress.Give(addr, now)
		overall.Give(struct{}{}, now)
		if !known {
			last, _ = f.known.Add(addr, new(atomic.Int64))
		}
		last.Store(now.UnixNano())
	}
	return p, err
}

// CredentialsPresenter is an optional interface of an [Authenticator]:
// one that implements it tells [AuthFailures] which requests present no
// credentials at all, so that they take nothing from the budget of failed
// authentications.
type CredentialsPresenter interface {
	// CredentialsPresent reports whether r carries credentials that
	// Authenticate would check. Authenticate must refuse a request for
	// which it reports false.
	CredentialsPresent(r *http.Request) bool
}

var _ CredentialsPresenter = (*TokenAuth)(nil)

// CredentialsPresent reports whether r has an Authorization header: a
// request without one is refused by Authenticate, and takes nothing from
// the budget of failed authentications.
func (a *TokenAuth) CredentialsPresent(r *http.Request) bool {
	return r.Header.Get("Authorization") != ""
}

// clientAddress returns the address whose budget a request of r takes
// from: the IP address of its client (the host of r.RemoteAddr, or all of
// it when it has no port), or for an IPv6 client its /64 network.
func clientAddress(r *http.Request) string {
	host := remoteHost(r)
	if ip, err := netip.ParseAddr(host); err == nil && ip.Is6() && !ip.Is4In6() {
		if p, err := ip.Prefix(64); err == nil {
			return p.String()
		}
	}
	return host
}

// tooManyFailures is the 429 response of a request refused by the budget
// of failed authentications.
func tooManyFailures(w http.ResponseWriter, e *TooManyFailuresError) *apiError {
	secs := budget.RetryAfter(e.RetryAfter)
	w.Header().Set("Retry-After", secs)
	return newError(http.StatusTooManyRequests, CodeTooManyRequests, "",
		"Too many failed authentications; the credentials were not checked. Please try again in %s.", budget.InWords(e.RetryAfter))
}
