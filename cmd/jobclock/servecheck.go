package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
)

// Bounds of the look at start for the jobs serve cannot run.
const (
	// foreignCheckJobs is the most jobs of scheduler.DefaultCollection
	// read, a page of 100 at a time.
	foreignCheckJobs = 1000
	// foreignCheckTimeout bounds the reads.
	foreignCheckTimeout = 5 * time.Second
	// foreignNamesLogged is the most job names the warning lists.
	foreignNamesLogged = 10
)

// warnForeignJobs logs a warning when the store holds Enabled jobs that
// serve claims but cannot run: jobs of scheduler.DefaultCollection, where
// a Go program's ScheduleFunc and Schedule put theirs, whose action or
// errorAction is a Go function (type Func) or of a type that has no
// executor in s. It reads at most foreignCheckJobs jobs of that one
// collection (a page of the store each 100; the collection holds 50 at
// most unless its quota was raised), so jobs of a program's own action
// types in other collections are not looked for: finding them would read
// every job, since the stores keep no count by action type. A failed
// read is logged at debug level: the look only warns.
func warnForeignJobs(ctx context.Context, s *scheduler.Scheduler, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(ctx, foreignCheckTimeout)
	defer cancel()
	executors := s.ParseOptions().Executors
	foreign := func(a *action.Action) bool {
		if a == nil {
			return false
		}
		if a.Type == action.Func {
			return true // only the process that registered the function runs it
		}
		_, ok := executors.Lookup(a.Type)
		return !ok
	}
	var names []string
	var types []string
	for skip := 0; skip < foreignCheckJobs; skip += 100 {
		page, err := s.ListJobs(ctx, scheduler.DefaultCollection, &scheduler.ListJobsOptions{State: scheduler.JobEnabled, Top: 100, Skip: skip})
		if errors.Is(err, scheduler.ErrNotFound) {
			return
		}
		if err != nil {
			log.Debug("looking for jobs this process cannot run", "collection", scheduler.DefaultCollection, "err", err)
			return
		}
		for _, r := range page {
			for _, a := range []*action.Action{&r.Job.Action, r.Job.Action.ErrorAction} {
				if foreign(a) {
					names = append(names, r.Name)
					if t := string(a.Type); !slices.Contains(types, t) {
						types = append(types, t)
					}
					break
				}
			}
		}
		if len(page) < 100 {
			break
		}
	}
	if len(names) == 0 {
		return
	}
	listed := strings.Join(names[:min(len(names), foreignNamesLogged)], ", ")
	if len(names) > foreignNamesLogged {
		listed += fmt.Sprintf(" and %d more", len(names)-foreignNamesLogged)
	}
	slices.Sort(types)
	log.Warn("the database holds jobs of a Go program that this process cannot run: it claims them as any other and each attempt fails, "+
		"retried as any failure, so their occurrences run late or fault; keep them in a database (or PostgreSQL schema) that only that program uses, "+
		"or run serve on another one",
		"collection", scheduler.DefaultCollection, "jobs", listed, "action_types", strings.Join(types, ", "))
}
