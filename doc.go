// Package scheduler is an embeddable job scheduler with the semantics of
// Azure Scheduler: job collections with quotas, jobs whose JSON definition
// says when to run and what to do, retry policies, an error action, job
// states and status counters, and a queryable execution history.
//
// This file is the map of the package; each section is filled in as the
// corresponding part lands.
package scheduler
