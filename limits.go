package scheduler

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jobclock/scheduler/action"
)

// The wait of an attempt refused a concurrency permit: its holders' attempts
// may end at any time, so the occurrence looks again after limitWaitMin,
// then after half the time it has waited so far, at most limitWaitMax.
const (
	limitWaitMin = 50 * time.Millisecond
	limitWaitMax = time.Second
)

// LimitTarget returns the target that the attempts of act count toward
// under a collection's limit of key host ([LimitHost]): the host of an
// HTTP action's URI (with its port when the URI gives one, as written:
// https://h/ and https://h:443/ are two targets with permits of their
// own, so write a host's URIs one way), the storage account of a storage
// queue action, the namespace of a Service Bus action, all in lower case;
// else (a Go func, a host's own type, a URI without a host) the action's
// type. Empty for a nil act.
func LimitTarget(act *action.Action) string {
	switch {
	case act == nil:
		return ""
	case act.Request != nil:
		if u, err := url.Parse(act.Request.URI); err == nil && u.Host != "" {
			return strings.ToLower(u.Host)
		}
	case act.QueueMessage != nil:
		return strings.ToLower(act.QueueMessage.StorageAccount)
	case act.ServiceBusQueueMessage != nil:
		return strings.ToLower(act.ServiceBusQueueMessage.Namespace)
	case act.ServiceBusTopicMessage != nil:
		return strings.ToLower(act.ServiceBusTopicMessage.Namespace)
	}
	return string(act.Type)
}

// permitsOf returns the permits that the next attempt of occurrence o of
// r needs under its collection's limits: a permit's scope is the
// collection, the limit's key and the key's value, so that the limits of
// two collections never share permits. No name holds a "|".
func permitsOf(r *JobRecord, o *Occurrence, limits []Limit) []Permit {
	ps := make([]Permit, 0, len(limits))
	for _, l := range limits {
		var value string
		switch l.Key {
		case LimitHost:
			act := &r.Job.Action
			if o.ErrorAction { // an errorAction counts toward its own target
				act = r.Job.Action.ErrorAction
			}
			value = LimitTarget(act)
		case LimitJob:
			value = r.Name
		}
		p := Permit{Scope: r.Collection + "|" + string(l.Key) + "|" + value, MaxConcurrent: l.MaxConcurrent}
		if l.RatePerMinute > 0 {
			p.Interval = time.Minute / time.Duration(l.RatePerMinute)
		}
		ps = append(ps, p)
	}
	return ps
}

// permitHolder names one attempt of occurrence o of r, by this instance,
// as a holder of permits: the collection, job, execution tag and instance,
// and a random word, so that no other attempt is ever the same holder,
// not even one of the same occurrence that another instance re-claimed
// after this one's lease lapsed (the one would be granted, extend or give
// back the other's permits).
func (s *Scheduler) permitHolder(r *JobRecord, o *Occurrence) string {
	tagged(r, o)
	return r.Collection + "|" + r.Name + "|" + o.Tag + "|" + s.cfg.InstanceID + "|" + newETag()
}

// heldPermits are the concurrency permits that an attempt holds: they
// are extended with its lease, and when they expire unextended (the store
// could not be reached, or answered that they were gone) the attempt is
// cancelled, since the permits may be another attempt's by then.
type heldPermits struct {
	holder string
	n      int             // the concurrency permits taken
	ctx    *attemptContext // the attempt's, once it started
	until  atomic.Int64    // when they expire unless extended, Unix nanoseconds
}

// takePermits takes the permits that the due attempt o of r needs under
// limits at now. It returns the concurrency permits it holds (nil when it
// took none, or the store keeps no permits), or, when the attempt must
// wait, when to try again and the limit that refused it (-1 when the
// store failed). The permits are held for hold from now, then extended
// with the job's lease (the attempt of a run under OverlapAllowAll, whose
// claim is not extended, takes them for the whole claim).
func (s *Scheduler) takePermits(r *JobRecord, o *Occurrence, limits []Limit, now time.Time, hold time.Duration) (held *heldPermits, retryAt time.Time, refused int) {
	if s.limiter == nil {
		if s.warnedLimits.CompareAndSwap(false, true) {
			s.log.Warn("the store keeps no permits (it is not a scheduler.Limiter): collections' limits are not enforced", "collection", r.Collection)
		}
		return nil, time.Time{}, 0
	}
	holder := s.permitHolder(r, o)
	ps := permitsOf(r, o, limits)
	until := now.Add(hold)
	g, err := s.limiter.AcquirePermits(context.Background(), PermitRequest{
		Holder: holder, Now: now, Until: until, Permits: ps})
	if err != nil || g.Granted { // a refusal writes nothing
		s.storeWrote("take the permits of the collection's limits", err)
	}
	if err == nil && g.Granted {
		n := 0
		for _, p := range ps {
			if p.MaxConcurrent > 0 {
				n++
			}
		}
		if n == 0 { // starts of rates only: nothing to extend or give back
			return nil, time.Time{}, 0
		}
		held = &heldPermits{holder: holder, n: n}
		held.until.Store(until.UnixNano())
		return held, time.Time{}, 0
	}
	since := now
	if o.Limited != nil {
		since = o.Limited.Since
	}
	wait := min(max(now.Sub(since)/2, limitWaitMin), limitWaitMax)
	if err != nil {
		// The take may have been written with its reply lost: give
		// back whatever holder got, which no later attempt asks for.
		s.releasePermits(holder)
		s.log.Log(context.Background(), failureLevel(err), "take the permits of the collection's limits; the attempt waits",
			"job", r.Name, "collection", r.Collection, "err", err)
		return nil, now.Add(limitWaitMax), -1
	}
	if g.RetryAt.After(now) {
		return nil, g.RetryAt, g.Refused
	}
	return nil, now.Add(wait), g.Refused
}

// extendPermits extends the permits p of a running attempt by a
// LeaseDuration from now, with its lease. When the store says that they
// are no longer all held, or when it failed and they would expire before
// the next extension (a third of a LeaseDuration on), the attempt is
// cancelled: past their expiry, another attempt may hold them, and a
// limit holds only as far as the leases of its permits do. It returns
// the store's error, which the lease keeper counts as it counts the
// failed extensions of leases (see leaseFailures). Permits that an
// attempt that ended meanwhile gave back are no loss: nothing is logged.
func (s *Scheduler) extendPermits(p *heldPermits) error {
	now := time.Now()
	until := now.Add(s.cfg.LeaseDuration)
	ctx, cancel := s.extendContext()
	defer cancel()
	n, err := s.limiter.ExtendPermits(ctx, p.holder, now, until)
	switch {
	case err == nil && n == p.n:
		p.until.Store(until.UnixNano())
		return nil
	case !s.leases.holdsPermits(p):
		// The attempt ended meanwhile, and gave them back: none is lost.
		return err
	case err == nil:
		s.log.Error("the attempt's permits of the collection's limits expired unextended; it is cancelled", "holder", p.holder, "held", n, "taken", p.n)
	case now.Add(s.cfg.LeaseDuration / 3).Before(time.Unix(0, p.until.Load())):
		s.log.Log(context.Background(), failureLevel(err), "extend the permits of the collection's limits", "holder", p.holder, "err", err)
		return err
	default:
		s.log.Error("the attempt's permits of the collection's limits expire before they can be extended; it is cancelled", "holder", p.holder, "err", err)
	}
	if p.ctx != nil {
		p.ctx.losePermits()
	}
	return err
}

// releasePermits gives back the permits that holder holds; when that
// fails, they return when their lease expires. A failure of the store
// counts toward an outage.
func (s *Scheduler) releasePermits(holder string) {
	err := s.limiter.ReleasePermits(context.Background(), holder)
	s.storeWrote("give back the permits of the collection's limits", err)
	if err != nil {
		s.log.Log(context.Background(), failureLevel(err), "give back the permits of the collection's limits; they return when their lease expires",
			"holder", holder, "err", err)
	}
}

// waitForLimit makes the occurrence o of r, whose attempt due at now was
// refused a permit by limits[refused] (-1: the store failed), wait until
// retryAt. It stays in progress: the job is due again then, and a wait
// neither counts as an attempt nor makes a history entry. o is r's current
// occurrence, or under OverlapAllowAll one of its runs, which then waits
// unclaimed like a run between its attempts. A retry whose wait would
// end past its deadline (see retryDeadline) waits until just past it,
// when the step faults the occurrence.
func (m machine) waitForLimit(r *JobRecord, o *Occurrence, now, retryAt time.Time, limits []Limit, refused int) {
	c := r.Schedule.Current
	if c == nil {
		p := r.Schedule.Policy
		i := slices.IndexFunc(p.Running, func(ru Run) bool { return ru.Tag == o.Tag && ru.Owner == m.owner })
		ru := &p.Running[i]
		ru.Owner, ru.Until = "", time.Time{}
		c = &ru.Occurrence
	}
	w := LimitWait{Since: now}
	if c.Limited != nil {
		w.Since = c.Limited.Since
	}
	if refused >= 0 && refused < len(limits) {
		w.Key = limits[refused].Key
	}
	c.Limited = &w // a new one: copies of the record may share the old
	tagged(r, c)   // the occurrence waits in the record
	if d := retryDeadline(r, c); !d.IsZero() && retryAt.After(d) {
		// The retry may not start after its deadline: it faults there
		// (see machine.expire).
		retryAt = d.Add(time.Nanosecond)
	}
	c.At = retryAt
	m.settle(r, now)
}

// limitWaited describes the wait for a limit of occurrence o for the
// history entry of its attempt; empty when it did not wait.
func limitWaited(o *Occurrence) string {
	if o.Limited == nil {
		return ""
	}
	d := limitWaitOf(o)
	if o.Limited.Key == "" {
		return fmt.Sprintf("waited %s for the permits of the collection's limits", d)
	}
	return fmt.Sprintf("waited %s for the collection's %s limit", d, o.Limited.Key)
}
