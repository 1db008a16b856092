package dashboard

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/jobclock/scheduler/httpapi"
	"github.com/jobclock/scheduler/internal/budget"
)

// The session cookie holds a signed session: when it expires, a random ID
// from which the form token is derived and, once signed in, the token
// signed in with, sealed (AES-GCM under a key derived from the session
// key), so that each request authenticates it again. Without
// authentication the session is anonymous and only carries the form
// token's ID, so that forms are protected against cross-site requests
// all the same.
const (
	sessionCookie = "jobclock_session"
	tokenField    = "csrf"
)

// session is the signed content of the session cookie.
type session struct {
	ID      string `json:"id"`
	Expires int64  `json:"exp"`
	// Token is the sealed token of a signed-in session; empty otherwise.
	Token string `json:"tok,omitempty"`
}

// viewer is who makes a request, as far as the dashboard is concerned.
type viewer struct {
	h       *handler
	authOn  bool
	session session
	// principal is the signed-in principal; nil without authentication.
	principal *httpapi.Principal
	// ended says the request came with a signed-in session that has
	// ended: signed out, or its token no longer authenticates.
	ended bool
	// unchecked is the Authenticator's error when the token of the
	// request's signed-in session could not be checked: the session goes
	// on, but the request has no principal.
	unchecked error
}

// seesAll reports whether the viewer sees every collection.
func (v *viewer) seesAll() bool {
	return !v.authOn || v.principal != nil && v.principal.AllSubscriptions
}

// sees reports whether the viewer may see the collection.
func (v *viewer) sees(collection string) bool { return visible(v.principal, v.authOn, collection) }

// readOnly reports whether the viewer may only look: its principal is
// read-only, or Options.ReadOnly says so.
func (v *viewer) readOnly() bool {
	return v.principal != nil && v.principal.ReadOnly || v.h.opts.ReadOnly != nil && v.h.opts.ReadOnly(v.principal)
}

// name is the viewer's name for the log and the page header.
func (v *viewer) name() string {
	if v.principal != nil {
		return v.principal.Name
	}
	return ""
}

// Token returns the form token of the viewer's session.
func (v *viewer) Token() string { return v.h.sign("csrf", v.session.ID) }

// checkToken reports whether t is the session's form token.
func (v *viewer) checkToken(t string) bool {
	return t != "" && hmac.Equal([]byte(t), []byte(v.Token()))
}

// sign returns the MAC of msg for purpose, base64url-encoded.
func (h *handler) sign(purpose, msg string) string {
	m := hmac.New(sha256.New, h.opts.SessionKey)
	m.Write([]byte(purpose))
	m.Write([]byte{0})
	m.Write([]byte(msg))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// readSession returns the request's valid, unexpired session.
func (h *handler) readSession(r *http.Request) (session, bool) {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return session{}, false
	}
	payload, mac, ok := strings.Cut(c.Value, ".")
	if !ok || !hmac.Equal([]byte(mac), []byte(h.sign("session", payload))) {
		return session{}, false
	}
	data, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return session{}, false
	}
	var s session
	if err := json.Unmarshal(data, &s); err != nil || s.ID == "" || time.Now().Unix() >= s.Expires {
		return session{}, false
	}
	return s, true
}

// writeSession sets the session cookie.
func (h *handler) writeSession(w http.ResponseWriter, r *http.Request, s session) {
	data, _ := json.Marshal(s)
	payload := base64.RawURLEncoding.EncodeToString(data)
	http.SetCookie(w, &http.Cookie{
		Name:     sessionCookie,
		Value:    payload + "." + h.sign("session", payload),
		Path:     h.opts.Prefix + "/",
		MaxAge:   int(time.Until(time.Unix(s.Expires, 0)).Seconds()),
		HttpOnly: true,
		Secure:   r.TLS != nil || h.opts.SecureCookies,
		SameSite: http.SameSiteStrictMode,
	})
}

// newSession returns a session with a fresh ID.
func (h *handler) newSession() session {
	id := make([]byte, 18)
	rand.Read(id)
	return session{ID: base64.RawURLEncoding.EncodeToString(id), Expires: time.Now().Add(h.opts.SessionTTL).Unix()}
}

// anonymous returns the viewer of a request that may not be signed in,
// starting a session when it has none, so that its forms carry a token.
// A signed-in session whose token is refused, or that was signed out, is
// no longer signed in: it is replaced by a new session. One whose token
// could not be checked keeps its cookie, without a principal (viewer
// answers 503).
func (h *handler) anonymous(w http.ResponseWriter, r *http.Request) *viewer {
	v := &viewer{h: h, authOn: h.opts.Authenticator != nil}
	s, ok := h.readSession(r)
	if ok && s.Token != "" {
		v.principal, v.unchecked = h.reauthenticate(r, s)
		if v.principal == nil && v.unchecked == nil {
			ok, v.ended = false, true
		}
	}
	if !ok {
		s = h.newSession()
		h.writeSession(w, r, s)
	}
	v.session = s
	return v
}

// reauthenticate returns the principal that the token of the signed-in
// session s gives now, through the Authenticator; nil when the session
// was signed out or its token is refused (an error that wraps
// httpapi.ErrUnauthenticated, or no principal). It returns the
// Authenticator's other errors: the token could not be checked, and the
// session has not ended. Its failures do not count as failed sign-ins:
// the cookie is signed, so it is not a guess.
func (h *handler) reauthenticate(r *http.Request, s session) (*httpapi.Principal, error) {
	if h.opts.Authenticator == nil || h.signedOut.has(s.ID) {
		return nil, nil
	}
	tok, err := h.openToken(s)
	if err != nil {
		return nil, nil
	}
	req, _ := http.NewRequestWithContext(r.Context(), http.MethodGet, "/", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	req.RemoteAddr = r.RemoteAddr
	p, err := h.opts.Authenticator.Authenticate(req)
	if err != nil && !errors.Is(err, httpapi.ErrUnauthenticated) {
		h.log.Warn("dashboard: the session's token could not be checked", "remote", r.RemoteAddr, "error", err)
		return nil, err
	}
	if err != nil || p == nil {
		h.log.Info("dashboard: session ended: its token no longer authenticates", "remote", r.RemoteAddr)
		return nil, nil
	}
	return p, nil
}

// sealToken seals tok for the session s: AES-GCM under the token key,
// with the session's ID as additional data, so that it opens only in
// that session.
func (h *handler) sealToken(s session, tok string) string {
	nonce := make([]byte, h.tokenKey.NonceSize(), h.tokenKey.NonceSize()+len(tok)+h.tokenKey.Overhead())
	rand.Read(nonce)
	return base64.RawURLEncoding.EncodeToString(h.tokenKey.Seal(nonce, nonce, []byte(tok), []byte(s.ID)))
}

// openToken returns the token sealed in the session s.
func (h *handler) openToken(s session) (string, error) {
	data, err := base64.RawURLEncoding.DecodeString(s.Token)
	if err != nil || len(data) < h.tokenKey.NonceSize() {
		return "", errors.New("dashboard: session token is not sealed")
	}
	n := h.tokenKey.NonceSize()
	tok, err := h.tokenKey.Open(nil, data[:n], data[n:], []byte(s.ID))
	return string(tok), err
}

// newTokenKey returns the AEAD that seals sessions' tokens: AES-256-GCM
// under a key derived from the session key.
func newTokenKey(sessionKey []byte) cipher.AEAD {
	m := hmac.New(sha256.New, sessionKey)
	m.Write([]byte("session token\x00"))
	block, err := aes.NewCipher(m.Sum(nil))
	if err != nil {
		panic(err) // a 32-byte key always makes a cipher
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic(err)
	}
	return aead
}

// maxSignedOut is how many sign-outs a process keeps: beyond it the
// oldest is forgotten.
const maxSignedOut = 100_000

// signedOut holds the IDs of the sessions signed out in this process,
// each until the session would have expired, the most recent max (0:
// maxSignedOut) of them.
type signedOut struct {
	mu  sync.Mutex
	max int
	ids map[string]struct{}
	// queue holds the sign-outs in the order they happened, from
	// queue[head] on; each is forgotten when it reaches the head and its
	// session has expired, or when max newer ones follow it.
	queue []signOut
	head  int
}

type signOut struct {
	id      string
	expires int64 // the session's expiry, Unix seconds
}

// add notes at now that the session s was signed out, and forgets the
// oldest sign-outs whose sessions have expired since, and beyond the
// bound the oldest one.
func (so *signedOut) add(s session, now time.Time) {
	so.mu.Lock()
	defer so.mu.Unlock()
	if so.ids == nil {
		so.ids = make(map[string]struct{})
	}
	if _, ok := so.ids[s.ID]; ok {
		return
	}
	limit := so.max
	if limit <= 0 {
		limit = maxSignedOut
	}
	for so.head < len(so.queue) && (now.Unix() >= so.queue[so.head].expires || len(so.ids) >= limit) {
		delete(so.ids, so.queue[so.head].id)
		so.queue[so.head] = signOut{}
		so.head++
	}
	if so.head > len(so.queue)/2 {
		so.queue = append(so.queue[:0], so.queue[so.head:]...)
		so.head = 0
	}
	so.queue = append(so.queue, signOut{id: s.ID, expires: s.Expires})
	so.ids[s.ID] = struct{}{}
}

// has reports whether the session with the ID was signed out.
func (so *signedOut) has(id string) bool {
	so.mu.Lock()
	defer so.mu.Unlock()
	_, ok := so.ids[id]
	return ok
}

// viewer returns the viewer of a request that needs one: without
// authentication anyone; with it, a signed-in user. Otherwise it answers
// (a redirect to the sign-in page for GET, 401 for anything else, 503
// when the session's token could not be checked) and returns false.
func (h *handler) viewer(w http.ResponseWriter, r *http.Request) (*viewer, bool) {
	v := h.anonymous(w, r)
	if !v.authOn || v.principal != nil {
		return v, true
	}
	if v.unchecked != nil {
		w.Header().Set("Retry-After", "5")
		h.failAs(w, r, v, http.StatusServiceUnavailable, "Your sign-in could not be checked just now; your session goes on. Please try again in a moment.")
		return nil, false
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		q := url.Values{"next": {r.URL.RequestURI()}}
		if v.ended {
			q.Set("ended", "1")
		}
		http.Redirect(w, r, h.url(q, "login"), http.StatusSeeOther)
		return nil, false
	}
	h.failAs(w, r, v, http.StatusUnauthorized, "Your session has ended; sign in again.")
	return nil, false
}

// loginPage shows the sign-in form; without authentication it sends the
// browser to the overview.
func (h *handler) loginPage(w http.ResponseWriter, r *http.Request) {
	if h.opts.Authenticator == nil {
		http.Redirect(w, r, h.url(nil), http.StatusSeeOther)
		return
	}
	v := h.anonymous(w, r)
	d := loginData{Next: h.localNext(r.URL.Query().Get("next"))}
	if r.URL.Query().Get("ended") != "" {
		d.Notice = "Your session has ended: you signed out elsewhere, or its token is no longer accepted. Sign in again to go on."
	}
	h.render(w, r, http.StatusOK, "login", v, d)
}

type loginData struct {
	Next  string
	Error string
	// Notice says why the browser was sent here: its session ended.
	Notice string
}

// login checks the token of the sign-in form and starts a signed-in
// session: a new ID, so that a session known before the sign-in is not
// the signed-in one.
func (h *handler) login(w http.ResponseWriter, r *http.Request) {
	if h.opts.Authenticator == nil {
		http.Redirect(w, r, h.url(nil), http.StatusSeeOther)
		return
	}
	if err := h.cop.Check(r); err != nil {
		h.fail(w, r, http.StatusForbidden, "This form was sent from another site; it was refused.")
		return
	}
	v := h.anonymous(w, r)
	r.Body = http.MaxBytesReader(w, r.Body, 8192)
	if err := r.ParseForm(); err != nil {
		h.failAs(w, r, v, http.StatusBadRequest, "The form could not be read.")
		return
	}
	next := h.localNext(r.PostForm.Get("next"))
	if !v.checkToken(r.PostForm.Get(tokenField)) {
		h.render(w, r, http.StatusForbidden, "login", v, loginData{Next: next, Error: "The sign-in form expired; please try again."})
		return
	}
	req, _ := http.NewRequestWithContext(r.Context(), http.MethodGet, "/", nil)
	if tok := strings.TrimSpace(r.PostForm.Get("token")); tok != "" {
		// An empty form presents no credentials: it takes nothing from
		// the budget of failed sign-ins.
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	req.RemoteAddr = r.RemoteAddr
	p, err := h.opts.AuthFailures.Authenticate(req, h.opts.Authenticator)
	var tooMany *httpapi.TooManyFailuresError
	if errors.As(err, &tooMany) {
		secs := budget.RetryAfter(tooMany.RetryAfter)
		h.log.Info("dashboard: sign-in refused: too many failed sign-ins", "remote", r.RemoteAddr)
		w.Header().Set("Retry-After", secs)
		h.render(w, r, http.StatusTooManyRequests, "login", v, loginData{Next: next,
			Error: "Too many failed sign-ins; please try again in " + budget.InWords(tooMany.RetryAfter) + "."})
		return
	}
	if err != nil && !errors.Is(err, httpapi.ErrUnauthenticated) {
		// It counts as a failed sign-in all the same: an Authenticator
		// that refused tokens with other errors would otherwise not be
		// budgeted at all.
		h.log.Warn("dashboard: sign-in could not be checked", "remote", r.RemoteAddr, "error", err)
		w.Header().Set("Retry-After", "5")
		h.render(w, r, http.StatusServiceUnavailable, "login", v, loginData{Next: next,
			Error: "Your token could not be checked just now; please try again in a moment."})
		return
	}
	if err != nil || p == nil {
		h.log.Info("dashboard: sign-in refused", "remote", r.RemoteAddr)
		h.render(w, r, http.StatusUnauthorized, "login", v, loginData{Next: next, Error: "That token is not valid."})
		return
	}
	s := h.newSession()
	s.Token = h.sealToken(s, strings.TrimSpace(r.PostForm.Get("token")))
	h.writeSession(w, r, s)
	h.log.Info("dashboard: signed in", "user", p.Name, "remote", r.RemoteAddr)
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// logout ends the session: in this process at once, so that a copy of
// its cookie is no session any more, and in the browser.
func (h *handler) logout(w http.ResponseWriter, r *http.Request, v *viewer) (string, error) {
	if v.session.Token != "" {
		h.signedOut.add(v.session, time.Now())
		h.log.Info("dashboard: signed out", "user", v.name(), "remote", r.RemoteAddr)
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: h.opts.Prefix + "/", MaxAge: -1,
		HttpOnly: true, Secure: r.TLS != nil || h.opts.SecureCookies, SameSite: http.SameSiteStrictMode})
	if h.opts.Authenticator == nil {
		return h.url(nil), nil
	}
	return h.url(nil, "login"), nil
}

// localNext returns next when it is a path of the dashboard, else the
// overview: the sign-in form never sends the browser elsewhere.
func (h *handler) localNext(next string) string {
	u, err := url.Parse(next)
	if err != nil || next == "" || u.Scheme != "" || u.Host != "" || strings.HasPrefix(next, "//") || strings.Contains(next, "\\") ||
		!strings.HasPrefix(u.Path, h.opts.Prefix+"/") || strings.HasPrefix(u.Path, h.opts.Prefix+"/login") {
		return h.url(nil)
	}
	return u.RequestURI()
}
