package http

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	nethttp "net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jobclock/scheduler/action"
)

type tokenKey [sha256.Size]byte

type tokenEntry struct {
	token     string
	refreshAt time.Time // fetch anew from here on
	expiresAt time.Time // never use after this
}

// tokenCall is a token fetch in flight that other callers wait for.
type tokenCall struct {
	done     chan struct{}
	tok      string
	err      error
	canceled bool // the fetching caller's context ended
}

// tokenCache caches access tokens by endpoint and credentials, and makes
// concurrent callers with the same key share one fetch.
type tokenCache struct {
	mu       sync.Mutex
	max      int
	margin   time.Duration
	m        map[tokenKey]tokenEntry
	inflight map[tokenKey]*tokenCall
}

func newTokenCache(max int, margin time.Duration) *tokenCache {
	return &tokenCache{max: max, margin: margin, m: make(map[tokenKey]tokenEntry), inflight: make(map[tokenKey]*tokenCall)}
}

func (c *tokenCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.m)
}

// store caches tok until expiresAt, to be replaced from
// expiresAt-min(margin, lifetime/2) on. A token without a lifetime is not
// cached.
func (c *tokenCache) store(key tokenKey, tok string, now, expiresAt time.Time) {
	life := expiresAt.Sub(now)
	if life <= 0 {
		delete(c.m, key)
		return
	}
	if len(c.m) >= c.max {
		for k, ent := range c.m {
			if !now.Before(ent.expiresAt) {
				delete(c.m, k)
			}
		}
		for k := range c.m {
			if len(c.m) < c.max {
				break
			}
			delete(c.m, k)
		}
	}
	c.m[key] = tokenEntry{token: tok, refreshAt: expiresAt.Add(-min(c.margin, life/2)), expiresAt: expiresAt}
}

// token returns an access token for the ActiveDirectoryOAuth
// authentication a, from the cache or from the token endpoint.
func (e *Executor) token(ctx context.Context, a *action.Authentication) (string, error) {
	authority := a.Authority
	path := "request.authentication.authority"
	if authority == "" {
		authority, path = e.authority, "Options.Authority"
	}
	endpoint, err := tokenEndpoint(authority, a.Tenant, path)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, s := range []string{endpoint, a.ClientID, a.Audience, a.Secret} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	var key tokenKey
	h.Sum(key[:0])

	c := e.tokens
	for {
		c.mu.Lock()
		now := time.Now()
		ent, ok := c.m[key]
		if ok && now.Before(ent.refreshAt) {
			c.mu.Unlock()
			return ent.token, nil
		}
		if call, busy := c.inflight[key]; busy {
			c.mu.Unlock()
			if ok && now.Before(ent.expiresAt) {
				// Being replaced, but still good.
				return ent.token, nil
			}
			select {
			case <-call.done:
			case <-ctx.Done():
				return "", ctx.Err()
			}
			if call.err == nil {
				return call.tok, nil
			}
			if call.canceled && ctx.Err() == nil {
				continue // the fetching caller gave up; fetch for ourselves
			}
			return "", call.err
		}
		call := &tokenCall{done: make(chan struct{})}
		c.inflight[key] = call
		c.mu.Unlock()

		tok, expiresAt, err := e.fetchToken(ctx, endpoint, a)
		call.tok, call.err, call.canceled = tok, err, ctx.Err() != nil

		c.mu.Lock()
		delete(c.inflight, key)
		if err == nil {
			c.store(key, tok, now, expiresAt)
		}
		c.mu.Unlock()
		close(call.done)
		return tok, err
	}
}

// tokenEndpoint is the Azure AD v1 token endpoint of tenant under
// authority: {authority}/{tenant}/oauth2/token.
func tokenEndpoint(authority, tenant, path string) (string, error) {
	u, err := url.Parse(authority)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", &FieldError{Path: path, Value: quote(authority), Reason: "must be an absolute http or https URL without query"}
	}
	if tenant == "." || tenant == ".." {
		return "", &FieldError{Path: "request.authentication.tenant", Value: quote(tenant), Reason: "is not a tenant"}
	}
	base := u.Scheme + "://" + u.Host + strings.TrimRight(u.EscapedPath(), "/")
	return base + "/" + url.PathEscape(tenant) + "/oauth2/token", nil
}

// tokenResponse is the JSON answer of a token endpoint. The v1 endpoint
// sends expires_in and expires_on as strings, the v2 endpoint expires_in as
// a number; both are accepted.
type tokenResponse struct {
	AccessToken      string          `json:"access_token"`
	TokenType        string          `json:"token_type"`
	ExpiresIn        json.RawMessage `json:"expires_in"`
	ExpiresOn        json.RawMessage `json:"expires_on"`
	Error            string          `json:"error"`
	ErrorDescription string          `json:"error_description"`
}

// fetchToken asks endpoint for a client-credentials token for a.Audience.
// It returns the token and when it expires (zero if the endpoint did not
// say). Errors name the endpoint's host and carry its error text, never the
// secret.
func (e *Executor) fetchToken(ctx context.Context, endpoint string, a *action.Authentication) (string, time.Time, error) {
	u, _ := url.Parse(endpoint)
	host := u.Host
	form := url.Values{
		"grant_type":    {"client_credentials"},
		"client_id":     {a.ClientID},
		"client_secret": {a.Secret},
		"resource":      {a.Audience},
	}
	req, err := nethttp.NewRequestWithContext(ctx, nethttp.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return "", time.Time{}, fmt.Errorf("token request to '%s' failed: %w", host, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", DefaultUserAgent)
	start := time.Now()
	resp, err := e.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return "", time.Time{}, fmt.Errorf("token request to '%s' failed: %w", host, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxTokenResponse))
	if err != nil {
		return "", time.Time{}, fmt.Errorf("token request to '%s' failed reading the response: %w", host, err)
	}
	var tr tokenResponse
	jsonErr := json.Unmarshal(body, &tr)
	if resp.StatusCode != nethttp.StatusOK {
		detail := strings.TrimSpace(strings.Join(nonEmpty(tr.Error, tr.ErrorDescription), ": "))
		if jsonErr != nil || detail == "" {
			text, cut := truncateUTF8(body, 512)
			detail = strings.ToValidUTF8(strings.TrimSpace(text), "\uFFFD")
			if cut {
				detail += "... (truncated)"
			}
		}
		msg := fmt.Sprintf("token endpoint '%s' answered %d %s", host, resp.StatusCode, statusText(resp))
		if detail != "" {
			msg += ": " + detail
		}
		return "", time.Time{}, errors.New(redact(msg, []string{a.Secret}))
	}
	if jsonErr != nil || tr.AccessToken == "" {
		return "", time.Time{}, fmt.Errorf("token endpoint '%s' answered without an access_token", host)
	}
	if tr.TokenType != "" && !strings.EqualFold(tr.TokenType, "Bearer") {
		return "", time.Time{}, fmt.Errorf("token endpoint '%s' answered with token_type %q, want Bearer", host, tr.TokenType)
	}
	var expiresAt time.Time
	if n, ok := jsonInt(tr.ExpiresIn); ok && n > 0 {
		expiresAt = start.Add(time.Duration(n) * time.Second)
	} else if n, ok := jsonInt(tr.ExpiresOn); ok && n > 0 {
		expiresAt = time.Unix(n, 0)
	}
	return tr.AccessToken, expiresAt, nil
}

// jsonInt reads an integer written as a JSON number or string.
func jsonInt(raw json.RawMessage) (int64, bool) {
	s := strings.Trim(strings.TrimSpace(string(raw)), `"`)
	if s == "" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || f < 0 || f > 1<<40 {
			return 0, false
		}
		return int64(f), true
	}
	return n, true
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
