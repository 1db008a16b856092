// Package azure adds the executors of the Azure action types to a
// registry in one line: StorageQueue (package
// [github.com/jobclock/scheduler/action/storagequeue]) and
// ServiceBusQueue and ServiceBusTopic (package
// [github.com/jobclock/scheduler/action/servicebus]).
//
// The Scheduler itself executes only Http and Https, so that a program
// that never sends a queue message does not link the Azure SDKs. A host
// that runs Azure actions registers their executors in the registry it
// passes as Config.Executors:
//
//	reg := new(action.Registry)
//	azure.Register(reg, nil)
//	defer reg.Close(context.Background()) // after Stop: closes the Azure clients
//	s, err := scheduler.New(st, &scheduler.Config{Executors: reg})
//
// Importing this package links azcore, azqueue, azservicebus and go-amqp
// (about 2 MB of a binary). A host that needs only one of the two
// registers that one alone with storagequeue.Register or
// servicebus.Register.
package azure

import (
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/action/servicebus"
	"github.com/jobclock/scheduler/action/storagequeue"
)

// Options configures the executors Register makes. A nil *Options means
// every default.
type Options struct {
	// StorageQueue configures the StorageQueue executor. Nil means
	// storagequeue's defaults.
	StorageQueue *storagequeue.Options
	// ServiceBus configures the executor of ServiceBusQueue and
	// ServiceBusTopic. Nil means servicebus's defaults.
	ServiceBus *servicebus.Options
}

// Executors are the executors Register made.
type Executors struct {
	StorageQueue *storagequeue.Executor
	ServiceBus   *servicebus.Executor
}

// Register makes the StorageQueue, ServiceBusQueue and ServiceBusTopic
// executors and registers them in reg, replacing executors registered for
// those types before. It returns them; [action.Registry.Close] on reg
// closes them, as does closing each.
func Register(reg *action.Registry, opts *Options) Executors {
	if opts == nil {
		opts = &Options{}
	}
	return Executors{
		StorageQueue: storagequeue.Register(reg, opts.StorageQueue),
		ServiceBus:   servicebus.Register(reg, opts.ServiceBus),
	}
}
