package telemetry

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	scheduler "github.com/jobclock/scheduler"
)

// Attach implements [scheduler.Observer]: it registers the observable
// gauges of s (jobclock.jobs, jobclock.jobs.due, jobclock.jobs.health,
// jobclock.jobs.in_flight, jobclock.jobs.in_flight.limit) until detach,
// which s.Stop calls.
func (o *Observer) Attach(s *scheduler.Scheduler) (detach func()) {
	g := &gauges{o: o, s: s}
	reg, err := o.meter.RegisterCallback(g.observe, o.jobs, o.due, o.health, o.inFlight, o.limit)
	if err != nil {
		o.log.Warn("telemetry: registering the gauges", "err", err)
		return func() {}
	}
	return func() {
		if err := reg.Unregister(); err != nil {
			o.log.Warn("telemetry: unregistering the gauges", "err", err)
		}
	}
}

// gauges answers the observable gauges of one Scheduler: its work in
// flight, and job counts and backlog from counts read at most once per
// Options.StatsMaxAge, since a count can cost a store a scan (tens of
// milliseconds for 100,000 jobs in PostgreSQL).
type gauges struct {
	o *Observer
	s *scheduler.Scheduler

	mu      sync.Mutex
	read    time.Time // when counts and backlog were read; zero: never
	counts  []scheduler.JobCount
	sets    map[[2]string]metric.ObserveOption
	backlog int
	health  map[scheduler.JobHealth]int
	ok      bool // the last read succeeded
}

// healthSets are the attribute sets of jobclock.jobs.health, one per
// health: the gauge's cardinality.
var healthSets = func() map[scheduler.JobHealth]metric.ObserveOption {
	m := make(map[scheduler.JobHealth]metric.ObserveOption, len(scheduler.Healths))
	for _, h := range scheduler.Healths {
		m[h] = metric.WithAttributeSet(attribute.NewSet(keyJobHealth.String(string(h))))
	}
	return m
}()

// gaugeTimeout bounds one reading of the counts.
const gaugeTimeout = 5 * time.Second

func (g *gauges) observe(ctx context.Context, ob metric.Observer) error {
	o := g.o
	n, limit := g.s.InFlight()
	ob.ObserveInt64(o.inFlight, int64(n))
	ob.ObserveInt64(o.limit, int64(limit))
	g.mu.Lock()
	defer g.mu.Unlock()
	if now := time.Now(); g.read.IsZero() || now.Sub(g.read) >= o.maxAge {
		g.read = now
		ctx, cancel := context.WithTimeout(ctx, gaugeTimeout)
		counts, err := g.s.JobCounts(ctx)
		var backlog int
		var health map[scheduler.JobHealth]int
		if err == nil {
			backlog, err = g.s.DueCount(ctx)
		}
		if err == nil {
			health, err = g.s.HealthCounts(ctx)
		}
		cancel()
		g.ok = err == nil
		if err != nil {
			if !errors.Is(err, scheduler.ErrStopped) {
				o.log.Warn("telemetry: reading job counts for the gauges", "err", err)
			}
			return nil // report nothing rather than stale or partial counts
		}
		g.counts, g.backlog, g.health = counts, backlog, health
	}
	if !g.ok {
		return nil
	}
	if g.sets == nil {
		g.sets = make(map[[2]string]metric.ObserveOption)
	}
	for _, c := range g.counts {
		k := [2]string{c.Collection, string(c.State)}
		opt, found := g.sets[k]
		if !found {
			opt = metric.WithAttributeSet(attribute.NewSet(keyCollection.String(c.Collection), keyJobState.String(string(c.State))))
			if len(g.sets) >= maxAttrSets {
				clear(g.sets)
			}
			g.sets[k] = opt
		}
		ob.ObserveInt64(o.jobs, int64(c.Jobs), opt)
	}
	ob.ObserveInt64(o.due, int64(g.backlog))
	for _, h := range scheduler.Healths {
		ob.ObserveInt64(o.health, int64(g.health[h]), healthSets[h])
	}
	return nil
}
