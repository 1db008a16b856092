package scheduler

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/jobclock/scheduler/action"
	httpaction "github.com/jobclock/scheduler/action/http"
	"github.com/jobclock/scheduler/secrets"
)

// Ephemeral is an optional capability of a [Store] that keeps what it
// holds in the process's memory only, so that nothing outlives the process:
// Ephemeral returns true. Without Config.Secrets, the Scheduler stores the
// secrets of job definitions unsealed in such a store (there is nothing at
// rest to protect) instead of refusing them. store/memory is ephemeral.
type Ephemeral interface {
	Ephemeral() bool
}

// secretField is one secret of a job definition: the JSON path of its
// action and its own path within it, the field that holds it (nil: none),
// and the action that holds it (nil: none).
type secretField struct {
	base, sub string
	v         *string
	act       *action.Action
}

// dest returns where f's action sends it (see destination); for the
// secret of an ActiveDirectoryOAuth authentication, which goes to the
// token endpoint and whose token goes to the request's host, both.
func (f secretField) dest() string {
	part, _, _ := strings.Cut(f.sub[1:], ".")
	d := destination(f.act, part)
	if f.sub == ".request.authentication.secret" && f.act != nil && f.act.Request != nil && f.act.Request.Authentication != nil {
		au := f.act.Request.Authentication
		authority := strings.ToLower(strings.TrimRight(au.Authority, "/"))
		if authority == "" {
			authority = "the default authority"
		}
		d += " with tokens from " + authority + " for tenant " + strings.ToLower(au.Tenant)
	}
	return d
}

// path returns the field's JSON path, such as
// "action.request.authentication.password".
func (f secretField) path() string { return f.base + f.sub }

// actionSecrets appends the secrets of a, whose JSON path is base, to out;
// not those of its error action.
func actionSecrets(out []secretField, a *action.Action, base string) []secretField {
	if a == nil {
		return out
	}
	if r := a.Request; r != nil && r.Authentication != nil {
		au := r.Authentication
		out = appendSecret(out, a, base, ".request.authentication.password", &au.Password)
		out = appendSecret(out, a, base, ".request.authentication.pfx", &au.Pfx)
		out = appendSecret(out, a, base, ".request.authentication.secret", &au.Secret)
	}
	if q := a.QueueMessage; q != nil {
		out = appendSecret(out, a, base, ".queueMessage.sasToken", &q.SASToken)
	}
	if m := a.ServiceBusQueueMessage; m != nil && m.Authentication != nil {
		out = appendSecret(out, a, base, ".serviceBusQueueMessage.authentication.sasKey", &m.Authentication.SASKey)
	}
	if m := a.ServiceBusTopicMessage; m != nil && m.Authentication != nil {
		out = appendSecret(out, a, base, ".serviceBusTopicMessage.authentication.sasKey", &m.Authentication.SASKey)
	}
	return out
}

func appendSecret(out []secretField, a *action.Action, base, sub string, v *string) []secretField {
	if *v == "" {
		return out
	}
	return append(out, secretField{base, sub, v, a})
}

// destination returns where the part of action a named by part (the
// first member of its secret's path within a: "request", "queueMessage",
// "serviceBusQueueMessage" or "serviceBusTopicMessage") sends its
// secrets: the scheme, host and port of the request's uri
// ("https://example.com:443"), the storage account ("storage account
// acct") or the Service Bus namespace ("Service Bus namespace ns"),
// without regard to case. It is "" when a has no such part.
func destination(a *action.Action, part string) string {
	switch {
	case a == nil:
		return ""
	case part == "request" && a.Request != nil:
		u, err := url.Parse(a.Request.URI)
		if err != nil || u.Host == "" {
			return a.Request.URI
		}
		scheme, port := strings.ToLower(u.Scheme), u.Port()
		switch {
		case port != "":
		case scheme == "http":
			port = "80"
		case scheme == "https":
			port = "443"
		}
		return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
	case part == "queueMessage" && a.QueueMessage != nil:
		return "storage account " + strings.ToLower(a.QueueMessage.StorageAccount)
	case part == "serviceBusQueueMessage" && a.ServiceBusQueueMessage != nil:
		return "Service Bus namespace " + strings.ToLower(a.ServiceBusQueueMessage.Namespace)
	case part == "serviceBusTopicMessage" && a.ServiceBusTopicMessage != nil:
		return "Service Bus namespace " + strings.ToLower(a.ServiceBusTopicMessage.Namespace)
	}
	return ""
}

// fieldIn returns field f of a definition as j (nil: none), whose
// secrets are fields, has it: the secret j holds at f's path (v nil when
// none) and the action there (act nil when none).
func fieldIn(j *Job, fields []secretField, f secretField) secretField {
	was := secretField{base: f.base, sub: f.sub}
	if j == nil {
		return was
	}
	for _, g := range fields {
		if g.base == f.base && g.sub == f.sub {
			return g
		}
	}
	was.act = &j.Action
	if f.base != "action" {
		was.act = j.Action.ErrorAction
	}
	return was
}

// jobSecrets returns the secrets of j's action and error action.
func jobSecrets(j *Job) []secretField {
	out := actionSecrets(nil, &j.Action, "action")
	out = actionSecrets(out, j.Action.ErrorAction, "action.errorAction")
	if len(out) > 1 {
		slices.SortFunc(out, func(a, b secretField) int { return strings.Compare(a.path(), b.path()) }) // errors in path order
	}
	return out
}

// ownSecrets returns a copy of a whose parts that hold secrets are copies
// too, so that its secrets can be set without changing a. The error action
// is copied likewise.
func ownSecrets(a action.Action) action.Action {
	if r := a.Request; r != nil && r.Authentication != nil {
		rc, au := *r, *r.Authentication
		rc.Authentication = &au
		a.Request = &rc
	}
	if q := a.QueueMessage; q != nil {
		qc := *q
		a.QueueMessage = &qc
	}
	if m := a.ServiceBusQueueMessage; m != nil && m.Authentication != nil {
		mc, au := *m, *m.Authentication
		mc.Authentication = &au
		a.ServiceBusQueueMessage = &mc
	}
	if m := a.ServiceBusTopicMessage; m != nil && m.Authentication != nil {
		mc, au := *m, *m.Authentication
		mc.Authentication = &au
		a.ServiceBusTopicMessage = &mc
	}
	if a.ErrorAction != nil {
		ea := ownSecrets(*a.ErrorAction)
		a.ErrorAction = &ea
	}
	return a
}

// use returns how f's action uses it, besides where it sends it: the
// type of its authentication for a secret of an HTTP request's
// authentication ("Basic", "ClientCertificate" or
// "ActiveDirectoryOAuth"), as the definition spells it; "" for the
// others, which have one use.
func (f secretField) use() string {
	if !strings.HasPrefix(f.sub, ".request.authentication.") || f.act == nil || f.act.Request == nil || f.act.Request.Authentication == nil {
		return ""
	}
	return string(f.act.Request.Authentication.Type)
}

// sealContext is what a secret is sealed for: the job, the field, the
// destination its action sends it to and, for a secret of an HTTP
// request's authentication, that authentication's type (without regard
// to case), so that a sealed value opens nowhere else, and a write that
// keeps it neither sends it elsewhere nor uses it otherwise (a
// certificate's password as a Basic password, which the server reads).
func sealContext(collection, name string, f secretField) string {
	c := destContext(collection, name, f)
	if u := f.use(); u != "" {
		c += " as " + strings.ToLower(u)
	}
	return c
}

// destContext is what a secret was sealed for before sealContext named
// the type of its authentication: the job, the field and the destination.
// For the secrets without such a type it is sealContext.
func destContext(collection, name string, f secretField) string {
	return legacyContext(collection, name, f) + " to " + f.dest()
}

// legacyContext is what a secret was sealed for before sealed values
// named their destination: the job and the field. Such a value, like one
// sealed for destContext, opens only where, and as, the definition stored
// for the job uses it (see openSecret).
func legacyContext(collection, name string, f secretField) string {
	return collection + "/" + name + "#" + f.base + f.sub
}

// anySealed reports whether one of fields holds a sealed value.
func anySealed(fields []secretField) bool {
	for _, f := range fields {
		if secrets.IsSealed(*f.v) {
			return true
		}
	}
	return false
}

// openDefinition returns j, a definition of job name of collection as
// the store holds it, with its sealed secrets opened: j itself when none
// is sealed, else a copy. A value that does not open is a
// [*ValidationError] at its path.
func (s *Scheduler) openDefinition(j *Job, collection, name string) (*Job, error) {
	return s.openGiven(j, collection, name, j)
}

// openGiven returns j, a definition of job name of collection given to a
// write, with its sealed secrets opened as openDefinition does, where
// stored is the definition the store holds for the job (nil: none): a
// sealed value opens only for the destination and authentication type
// its action has in j (see sealContext), or, sealed before secrets named
// them, when stored holds that very value at that destination with that
// type (see openSecret). A value kept from stored whose destination or
// type j changes is refused at its path with a message saying so.
func (s *Scheduler) openGiven(j *Job, collection, name string, stored *Job) (*Job, error) {
	if !anySealed(jobSecrets(j)) {
		return j, nil
	}
	var kept []secretField
	if stored != nil {
		kept = jobSecrets(stored)
	}
	c := *j
	c.Action = ownSecrets(j.Action)
	var errs []error
	for _, f := range jobSecrets(&c) {
		if !secrets.IsSealed(*f.v) {
			continue
		}
		plain, err := s.openSecret(*f.v, collection, name, f, fieldIn(stored, kept, f))
		if err != nil {
			errs = append(errs, &ValidationError{Path: f.path(), Reason: err.Error()})
			continue
		}
		*f.v = plain
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &c, nil
}

// openSecret opens the sealed value v of field f of a job, where was is
// that field in the definition the store holds for the job (see
// fieldIn): v opens when sealed for f's destination and use (see
// sealContext), or sealed as earlier versions sealed (see openOlder)
// when was holds v at f's destination and with f's use. A value that
// opens for was, whose destination or use f changes, is refused saying
// so. Its error says why in words for a history entry or a validation
// error, never with the value.
func (s *Scheduler) openSecret(v, collection, name string, f, was secretField) (string, error) {
	plain, err := s.cfg.Secrets.Open(v, sealContext(collection, name, f))
	switch {
	case err == nil:
		return plain, nil
	case s.cfg.Secrets == nil:
		return "", errors.New("is sealed, and the scheduler has no key to open it (Config.Secrets)")
	case errors.Is(err, secrets.ErrUnknownKey):
		id, _ := secrets.KeyID(v)
		return "", fmt.Errorf("is sealed with key %s, which is not among the scheduler's keys (%v)", id, s.cfg.Secrets.IDs())
	}
	kept := was.v != nil && *was.v == v
	if kept && !moved(was, f) {
		if plain, ok := s.openOlder(v, collection, name, f); ok {
			return plain, nil
		}
	}
	if was.dest() != "" && moved(was, f) {
		_, err := s.cfg.Secrets.Open(v, sealContext(collection, name, was))
		opened := err == nil
		if !opened && kept {
			_, opened = s.openOlder(v, collection, name, was)
		}
		if opened {
			return "", movedError(was, f)
		}
	}
	return "", errors.New("is a sealed value that does not open for this job, field and destination (a secret sealed for one job cannot be copied to another, nor sent elsewhere; give the secret itself)")
}

// openOlder opens v, the sealed value of field f of job name of
// collection, sealed as earlier versions sealed: for the job, the field
// and the destination (destContext); for an ActiveDirectoryOAuth secret
// also for the request's origin alone, as before its destination named
// the token endpoint; or for the job and the field alone
// (legacyContext). It reports whether v opened.
func (s *Scheduler) openOlder(v, collection, name string, f secretField) (string, bool) {
	if f.use() != "" {
		if plain, err := s.cfg.Secrets.Open(v, destContext(collection, name, f)); err == nil {
			return plain, true
		}
	}
	if f.sub == ".request.authentication.secret" {
		origin := legacyContext(collection, name, f) + " to " + destination(f.act, "request")
		if plain, err := s.cfg.Secrets.Open(v, origin); err == nil {
			return plain, true
		}
	}
	plain, err := s.cfg.Secrets.Open(v, legacyContext(collection, name, f))
	return plain, err == nil
}

// moved reports whether f, a secret's field in a definition being
// written, sends it elsewhere or uses it otherwise than was, that field
// in the definition stored (see fieldIn).
func moved(was, f secretField) bool {
	return was.dest() != f.dest() || !strings.EqualFold(was.use(), f.use())
}

// movedError is the error of a secret kept from was, its field in the
// definition stored, that f, its field in the definition being written,
// sends elsewhere or uses otherwise (see moved).
func movedError(was, f secretField) error {
	from, to := was.dest(), f.dest()
	var changed []string
	if from != to {
		changed = append(changed, fmt.Sprintf("the destination of its action changed from %s to %s", from, to))
	}
	if !strings.EqualFold(was.use(), f.use()) {
		changed = append(changed, fmt.Sprintf("the type of its authentication changed from %s to %s", was.use(), f.use()))
	}
	return fmt.Errorf("is kept from the job's definition, and %s: a kept secret is sent only where it was, and used only as it was, so give the secret again to send it there", strings.Join(changed, ", and "))
}

// keptMoved returns an error at the path of each secret of def, a
// definition merged from patch (a merge patch of its members) into
// stored, the definition the store holds for the job with its secrets
// open (or stored unsealed: without a key, in an Ephemeral store, or
// before the store had one), that def keeps from stored, the patch
// leaving it out, and that def sends elsewhere or uses otherwise (see
// moved): the rule openGiven applies to a sealed secret kept, with the
// same message. Sealed values, which the secrets of stored that do not
// open keep, are left to openGiven.
func keptMoved(def, stored *Job, patch map[string]any) error {
	var kept []secretField
	var errs []error
	for _, f := range jobSecrets(def) {
		if secrets.IsSealed(*f.v) || givenIn(patch, f.path()) {
			continue
		}
		if kept == nil {
			kept = jobSecrets(stored)
		}
		if was := fieldIn(stored, kept, f); was.v != nil && *was.v == *f.v && moved(was, f) {
			errs = append(errs, &ValidationError{Path: f.path(), Reason: movedError(was, f).Error()})
		}
	}
	return errors.Join(errs...)
}

// givenIn reports whether patch, a merge patch of a definition, gives a
// value other than null at path ("action.request.authentication.password"),
// its members matched without regard to case as the merge matches them.
func givenIn(patch map[string]any, path string) bool {
	var v any = patch
	for k := range strings.SplitSeq(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		v = memberFold(m, k)
	}
	return v != nil
}

// sealDefinition returns j, whose secrets are plain, with its secrets
// sealed for job name of collection: j itself when it has none, or when
// there is no key and the store is Ephemeral; else a copy. Without a key,
// each secret of a job bound for a store that is not Ephemeral is a
// [*ValidationError] at its path.
func (s *Scheduler) sealDefinition(j *Job, collection, name string) (*Job, error) {
	fields := jobSecrets(j)
	if len(fields) == 0 {
		return j, nil
	}
	if s.cfg.Secrets == nil {
		if e, ok := s.store.(Ephemeral); ok && e.Ephemeral() {
			return j, nil
		}
		errs := make([]error, len(fields))
		for i, f := range fields {
			errs[i] = &ValidationError{Path: f.path(), Reason: "is a secret, and the scheduler has no key to seal it with before storing it (Config.Secrets; jobclock: -key-file or JOBCLOCK_SECRETS_KEY)"}
		}
		return nil, errors.Join(errs...)
	}
	c := *j
	c.Action = ownSecrets(j.Action)
	for _, f := range jobSecrets(&c) {
		sealed, err := s.cfg.Secrets.Seal(*f.v, sealContext(collection, name, f))
		if err != nil {
			return nil, fmt.Errorf("%s: seal: %w", f.path(), err)
		}
		*f.v = sealed
	}
	return &c, nil
}

// openAction returns a, the action at path ("action" or
// "action.errorAction") of job name of collection, with its sealed
// secrets opened for its executor: a itself when none is sealed, else a
// copy. The error names the field and why it does not open.
func (s *Scheduler) openAction(a *action.Action, collection, name, path string) (*action.Action, error) {
	var buf [4]secretField
	if !anySealed(actionSecrets(buf[:0], a, path)) {
		return a, nil
	}
	c := *a
	c.ErrorAction = nil // not needed by the executor, and left sealed
	c = ownSecrets(c)
	c.ErrorAction = a.ErrorAction
	for _, f := range actionSecrets(buf[:0], &c, path) {
		if !secrets.IsSealed(*f.v) {
			continue
		}
		plain, err := s.openSecret(*f.v, collection, name, f, f)
		if err != nil {
			return nil, fmt.Errorf("%s %w", f.path(), err)
		}
		*f.v = plain
	}
	return &c, nil
}

// describeCertificates fills in the Certificate* fields of the client
// certificates in j (whose secrets are plain), for the management API to
// show once the pfx is sealed. It changes j in place.
func describeCertificates(j *Job) {
	for _, a := range []*action.Action{&j.Action, j.Action.ErrorAction} {
		if a == nil || a.Request == nil || a.Request.Authentication == nil {
			continue
		}
		au := a.Request.Authentication
		if au.Type != action.AuthClientCertificate || au.Pfx == "" {
			continue
		}
		c, err := httpaction.ReadCertificate(au.Pfx, au.Password)
		if err != nil {
			continue
		}
		exp := c.ExpirationDate
		au.CertificateThumbprint, au.CertificateSubjectName, au.CertificateExpirationDate = c.Thumbprint, c.SubjectName, &exp
	}
}

// ResealSecrets seals every secret in the store with the primary key of
// Config.Secrets: values sealed with another key of the keyring, values
// sealed before a sealed value named the destination it is sent to and
// the type of its authentication (see sealContext), and values stored
// unsealed (before the store had a key). Each job is
// rewritten in one atomic step, keeping its ETag, state and schedule; a
// job changed meanwhile is read again. Jobs whose secrets are all sealed
// with the primary key are left alone, so a reseal that stopped half-way
// can be run again. It returns the number of jobs rewritten. A value that
// does not open with any key stops it with an error naming the job and
// field; the jobs rewritten until then stay rewritten.
func (s *Scheduler) ResealSecrets(ctx context.Context) (int, error) {
	if err := s.live(); err != nil {
		return 0, err
	}
	if s.cfg.Secrets == nil {
		return 0, errors.New("reseal: the scheduler has no key (Config.Secrets)")
	}
	n := 0
	err := eachJob(ctx, s.store, func(r *JobRecord) error {
		done, err := s.resealJob(ctx, r)
		if done {
			n++
		}
		return err
	})
	return n, err
}

// eachJob calls fn with every job of store, a page of MaxPageSize at a
// time, until fn returns an error, which it returns. A collection
// deleted meanwhile is passed over.
func eachJob(ctx context.Context, store Store, fn func(*JobRecord) error) error {
	cols, err := store.ListCollections(ctx)
	if err != nil {
		return err
	}
	for _, col := range cols {
		for skip := 0; ; skip += MaxPageSize {
			jobs, err := store.ListJobs(ctx, col.Name, JobFilter{Skip: skip, Top: MaxPageSize})
			if errors.Is(err, ErrNotFound) {
				break // deleted meanwhile
			}
			if err != nil {
				return err
			}
			for _, r := range jobs {
				if err := fn(r); err != nil {
					return err
				}
			}
			if len(jobs) < MaxPageSize {
				break
			}
		}
	}
	return nil
}

// SealedKey is a key that secrets stored in a store are sealed with, as
// [SealedKeys] reports it.
type SealedKey struct {
	// ID is the key's id, as [secrets.Key.ID] gives it.
	ID string
	// Jobs is the number of jobs with a secret sealed with the key.
	Jobs int
	// First is the first of those jobs found, and Path the JSON path of
	// its secret sealed with the key
	// ("action.request.authentication.password").
	First JobKey
	Path  string
}

// SealedKeys returns the keys that the secrets stored in store are sealed
// with, in the order found; none when no secret is sealed. Each must be
// in Config.Secrets for the attempts of its jobs to open their secrets
// (an attempt whose secret does not open fails), and a store that holds
// none may be given a new key. It reads every job, a page at a time: it
// is meant for a check at start (jobclock serve, run and reseal refuse a
// database that holds secrets sealed with a key they lack), not for every
// occurrence.
func SealedKeys(ctx context.Context, store Store) ([]SealedKey, error) {
	var out []SealedKey
	err := eachJob(ctx, store, func(r *JobRecord) error {
		var seen []string // the keys of r's secrets already counted
		for _, f := range jobSecrets(r.Job) {
			id, sealed := secrets.KeyID(*f.v)
			if !sealed || slices.Contains(seen, id) {
				continue
			}
			seen = append(seen, id)
			i := slices.IndexFunc(out, func(k SealedKey) bool { return k.ID == id })
			if i < 0 {
				out = append(out, SealedKey{ID: id, First: JobKey{r.Collection, r.Name}, Path: f.path()})
				i = len(out) - 1
			}
			out[i].Jobs++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// resealJob reseals the secrets of job r (as read from the store), reading
// it again when another writer changed it. It reports whether it wrote.
func (s *Scheduler) resealJob(ctx context.Context, r *JobRecord) (bool, error) {
	primary := s.cfg.Secrets.Primary()
	for range maxWriteAttempts {
		stale := false
		for _, f := range jobSecrets(r.Job) {
			if stale {
				break
			}
			id, sealed := secrets.KeyID(*f.v)
			if stale = !sealed || id != primary; !stale {
				// Sealed before secrets named their destination and use?
				_, err := s.cfg.Secrets.Open(*f.v, sealContext(r.Collection, r.Name, f))
				stale = err != nil
			}
		}
		if !stale {
			return false, nil
		}
		plain, err := s.openDefinition(r.Job, r.Collection, r.Name)
		if err != nil {
			return false, fmt.Errorf("reseal job %q: %w", r.ID(), err)
		}
		job, err := s.sealDefinition(plain, r.Collection, r.Name)
		if err != nil {
			return false, fmt.Errorf("reseal job %q: %w", r.ID(), err)
		}
		w := r.Clone()
		w.Job = job
		err = s.store.PutJob(ctx, w)
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, ErrConflict) {
			return false, fmt.Errorf("reseal job %q: %w", r.ID(), err)
		}
		if r, err = s.store.GetJob(ctx, r.Collection, r.Name); errors.Is(err, ErrNotFound) {
			return false, nil
		} else if err != nil {
			return false, err
		}
	}
	return false, fmt.Errorf("reseal job %q: too many concurrent writes: %w", r.ID(), ErrConflict)
}
