package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/action/azure"
	"github.com/jobclock/scheduler/action/servicebus"
	"github.com/jobclock/scheduler/action/storagequeue"
	"github.com/jobclock/scheduler/store/memory"
	"github.com/jobclock/scheduler/store/postgres"
	"github.com/jobclock/scheduler/store/sqlite"
)

// openStore opens the PostgreSQL store when dsn is set (tables in schema,
// engineConns connections reserved for the scheduler, 0 for the default),
// else the SQLite file at dbPath, else, when both are empty, a memory
// store. The returned func closes the store.
func openStore(ctx context.Context, dbPath, dsn, schema string, engineConns int) (scheduler.Store, func(), error) {
	switch {
	case dsn != "":
		st, err := postgres.Open(ctx, dsn, &postgres.Options{Schema: schema, EngineConns: engineConns})
		if err != nil {
			return nil, nil, fmt.Errorf("open postgres: %w", err)
		}
		return st, func() { st.Close() }, nil
	case dbPath != "":
		st, err := sqlite.Open(ctx, dbPath, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("open %s: %w", dbPath, err)
		}
		return st, func() { st.Close() }, nil
	default:
		return memory.New(), func() {}, nil
	}
}

// executors returns the executors run and serve add to the Scheduler's own
// (Http and Https), so that the command runs every Azure Scheduler action
// type: StorageQueue, ServiceBusQueue and ServiceBusTopic. timeout bounds
// each send. Close the registry after the Scheduler stopped.
func executors(timeout time.Duration) *action.Registry {
	reg := new(action.Registry)
	azure.Register(reg, &azure.Options{
		StorageQueue: &storagequeue.Options{Timeout: timeout},
		ServiceBus:   &servicebus.Options{Timeout: timeout},
	})
	return reg
}

// addLeaseFlag defines -lease, the scheduler's Config.LeaseDuration.
func addLeaseFlag(fs *flag.FlagSet) *time.Duration {
	return fs.Duration("lease", scheduler.DefaultLeaseDuration,
		"how long a claimed job stays leased without a heartbeat (at least 1s): when a process sharing the\n"+
			"store dies, another takes its jobs over within this long; raise it when the store may stall for seconds")
}

// checkLease checks the value of -lease.
func checkLease(d time.Duration) error {
	if d < time.Second {
		return fmt.Errorf("-lease %s is shorter than 1s", d)
	}
	return nil
}
