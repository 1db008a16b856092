package httpapi

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"

	"github.com/jobclock/scheduler/internal/names"
)

// Authenticator identifies the caller of a request. The handler calls it
// once per request, before routing.
type Authenticator interface {
	// Authenticate returns the caller's principal, or an error when the
	// request carries no valid credentials (HTTP 401). It must not read
	// the request body.
	Authenticate(r *http.Request) (*Principal, error)
}

// AuthenticatorFunc adapts a function to the Authenticator interface.
type AuthenticatorFunc func(r *http.Request) (*Principal, error)

// Authenticate calls f(r).
func (f AuthenticatorFunc) Authenticate(r *http.Request) (*Principal, error) { return f(r) }

// Principal is an authenticated caller and what it may reach.
type Principal struct {
	// Name identifies the caller in the log (never the credential
	// itself).
	Name string
	// AllSubscriptions lets the caller reach every subscription.
	AllSubscriptions bool
	// Subscriptions are the subscription IDs the caller may reach,
	// compared without regard to case. Empty (with AllSubscriptions
	// false) means none.
	Subscriptions []string
	// ReadOnly lets the caller only read: the handler answers its
	// requests with any method but GET and HEAD with 403
	// AuthorizationFailed, and the dashboard shows it nothing that
	// changes anything.
	ReadOnly bool
}

// Allows reports whether p may reach the subscription. A nil Principal
// allows nothing.
func (p *Principal) Allows(subscriptionID string) bool {
	if p == nil {
		return false
	}
	if p.AllSubscriptions {
		return true
	}
	for _, s := range p.Subscriptions {
		if strings.EqualFold(s, subscriptionID) {
			return true
		}
	}
	return false
}

// ErrUnauthenticated is returned by the built-in authenticator when a
// request carries no credentials or unknown ones. An Authenticator
// wraps it in an error that refuses the credentials, as opposed to one
// that could not check them: the dashboard ends a signed-in session only
// on such an error.
var ErrUnauthenticated = errors.New("httpapi: unauthenticated")

// TokensEnv is the environment variable that LoadTokenAuth reads when it
// is given no file.
const TokensEnv = "JOBCLOCK_API_TOKENS"

// TokenAuth authenticates callers by a bearer token in the Authorization
// header ("Authorization: Bearer TOKEN"). Each token is limited to a list
// of subscriptions, or to all of them.
type TokenAuth struct {
	tokens map[[sha256.Size]byte]*Principal
}

var _ Authenticator = (*TokenAuth)(nil)

// tokenPattern is what a token may contain: no spaces, commas or
// semicolons, at least 16 characters so that it cannot be guessed easily.
var tokenPattern = regexp.MustCompile(`^[A-Za-z0-9._~+/=:@-]{16,512}$`)

// NewTokenAuth parses a token list: one "TOKEN SUBSCRIPTION[,SUBSCRIPTION...]"
// entry per line, or per ';'-separated item (so that the list fits in one
// environment variable). "*" as the subscription list allows every
// subscription. A third field "read-only" makes the token's principal one
// that may only read ([Principal].ReadOnly). Blank lines and lines
// starting with '#' are ignored. A
// token is 16 to 512 characters of letters, digits and ._~+/=:@-. An
// empty list is an error, as is a token given twice; errors name the entry
// (counting from 1), never the token.
func NewTokenAuth(list string) (*TokenAuth, error) {
	a := &TokenAuth{tokens: make(map[[sha256.Size]byte]*Principal)}
	var errs []error
	n := 0
	for _, line := range strings.FieldsFunc(list, func(r rune) bool { return r == '\n' || r == ';' }) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		n++
		fields := strings.Fields(line)
		if len(fields) != 2 && len(fields) != 3 {
			errs = append(errs, fmt.Errorf("token entry %d: want \"TOKEN SUBSCRIPTION[,SUBSCRIPTION...] [read-only]\" (two or three fields), got %d fields", n, len(fields)))
			continue
		}
		tok, subs := fields[0], fields[1]
		if !tokenPattern.MatchString(tok) {
			errs = append(errs, fmt.Errorf("token entry %d: the token must be 16 to 512 characters of letters, digits and ._~+/=:@-", n))
			continue
		}
		p := &Principal{Name: fmt.Sprintf("token#%d", n)}
		if len(fields) == 3 {
			if !strings.EqualFold(fields[2], "read-only") {
				errs = append(errs, fmt.Errorf("token entry %d: the third field is %q; the only one known is \"read-only\"", n, fields[2]))
				continue
			}
			p.ReadOnly = true
		}
		if subs == "*" {
			p.AllSubscriptions = true
		} else {
			for _, s := range strings.Split(subs, ",") {
				if s == "" || s == "*" || !names.ValidScope(s) {
					errs = append(errs, fmt.Errorf("token entry %d: subscription %q is not a subscription ID (or use \"*\" alone for all)", n, s))
					continue
				}
				p.Subscriptions = append(p.Subscriptions, strings.ToLower(s))
			}
		}
		key := sha256.Sum256([]byte(tok))
		if _, dup := a.tokens[key]; dup {
			errs = append(errs, fmt.Errorf("token entry %d: the token is listed twice", n))
			continue
		}
		a.tokens[key] = p
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("httpapi: token list: %w", err)
	}
	if len(a.tokens) == 0 {
		return nil, errors.New("httpapi: token list: no tokens")
	}
	return a, nil
}

// LoadTokenAuth reads the token list of [NewTokenAuth] from the file at
// path, or, when path is empty, from the environment variable
// JOBCLOCK_API_TOKENS. It returns nil and no error when path is empty and
// the variable is unset or empty (no authentication configured): given as
// the Authenticator of [New] or of the dashboard, that nil means no
// authentication, as a nil Authenticator does.
func LoadTokenAuth(path string) (*TokenAuth, error) {
	if path == "" {
		v := os.Getenv(TokensEnv)
		if strings.TrimSpace(v) == "" {
			return nil, nil
		}
		a, err := NewTokenAuth(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", TokensEnv, err)
		}
		return a, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("httpapi: read token file: %w", err)
	}
	a, err := NewTokenAuth(string(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return a, nil
}

// Authenticate looks up the bearer token of r. It returns an error
// matching ErrUnauthenticated when there is none or it is unknown. A nil
// *TokenAuth knows no token.
func (a *TokenAuth) Authenticate(r *http.Request) (*Principal, error) {
	if a == nil {
		return nil, fmt.Errorf("no tokens configured: %w", ErrUnauthenticated)
	}
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		return nil, fmt.Errorf("no bearer token in the Authorization header: %w", ErrUnauthenticated)
	}
	p, ok := a.tokens[sha256.Sum256([]byte(strings.TrimSpace(tok)))]
	if !ok {
		return nil, fmt.Errorf("unknown bearer token: %w", ErrUnauthenticated)
	}
	return p, nil
}

type principalKey struct{}

// PrincipalFrom returns the principal of a request's context, set by the
// handler after authentication; nil when authentication is off.
func PrincipalFrom(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	return p
}
