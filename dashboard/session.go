package dashboard

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/jobclock/scheduler/httpapi"
	"github.com/jobclock/scheduler/internal/budget"
)

// The session cookie holds a signed session: who signed in (a copy of the
// principal the token gave), when it expires, and a random ID from which
// the form token is derived. Without authentication the session is
// anonymous and only carries the form token's ID, so that forms are
// protected against cross-site requests all the same.
const (
	sessionCookie = "jobclock_session"
	tokenField    = "csrf"
)

// session is the signed content of the session cookie.
type session struct {
	ID       string   `json:"id"`
	Expires  int64    `json:"exp"`
	SignedIn bool     `json:"in,omitempty"`
	Name     string   `json:"n,omitempty"`
	All      bool     `json:"all,omitempty"`
	Subs     []string `json:"subs,omitempty"`
}

// viewer is who makes a request, as far as the dashboard is concerned.
type viewer struct {
	h       *handler
	authOn  bool
	session session
	// principal is the signed-in principal; nil without authentication.
	principal *httpapi.Principal
}

// seesAll reports whether the viewer sees every collection.
func (v *viewer) seesAll() bool {
	return !v.authOn || v.principal != nil && v.principal.AllSubscriptions
}

// sees reports whether the viewer may see the collection.
func (v *viewer) sees(collection string) bool { return visible(v.principal, v.authOn, collection) }

// readOnly reports whether the viewer may only look (Options.ReadOnly).
func (v *viewer) readOnly() bool {
	return v.h.opts.ReadOnly != nil && v.h.opts.ReadOnly(v.principal)
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
func (h *handler) anonymous(w http.ResponseWriter, r *http.Request) *viewer {
	v := &viewer{h: h, authOn: h.opts.Authenticator != nil}
	s, ok := h.readSession(r)
	if !ok {
		s = h.newSession()
		h.writeSession(w, r, s)
	}
	v.session = s
	if s.SignedIn && v.authOn {
		v.principal = &httpapi.Principal{Name: s.Name, AllSubscriptions: s.All, Subscriptions: s.Subs}
	}
	return v
}

// viewer returns the viewer of a request that needs one: without
// authentication anyone; with it, a signed-in user. Otherwise it answers
// (a redirect to the sign-in page for GET, 401 for anything else) and
// returns false.
func (h *handler) viewer(w http.ResponseWriter, r *http.Request) (*viewer, bool) {
	v := h.anonymous(w, r)
	if !v.authOn || v.principal != nil {
		return v, true
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		http.Redirect(w, r, h.url(url.Values{"next": {r.URL.RequestURI()}}, "login"), http.StatusSeeOther)
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
	h.render(w, r, http.StatusOK, "login", v, loginData{Next: h.localNext(r.URL.Query().Get("next"))})
}

type loginData struct {
	Next  string
	Error string
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
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(r.PostForm.Get("token")))
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
	if err != nil || p == nil {
		h.log.Info("dashboard: sign-in refused", "remote", r.RemoteAddr)
		h.render(w, r, http.StatusUnauthorized, "login", v, loginData{Next: next, Error: "That token is not valid."})
		return
	}
	s := h.newSession()
	s.SignedIn, s.Name, s.All, s.Subs = true, p.Name, p.AllSubscriptions, p.Subscriptions
	h.writeSession(w, r, s)
	h.log.Info("dashboard: signed in", "user", p.Name, "remote", r.RemoteAddr)
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// logout ends the session.
func (h *handler) logout(w http.ResponseWriter, r *http.Request, v *viewer) (string, error) {
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
