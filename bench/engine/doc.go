// Package engine compares the jobclock scheduler's engine with
// robfig/cron v3 and go-co-op/gocron v2 doing the same work with no-op
// jobs. Run it once (each benchmark does its own sizing):
//
//	cd bench && go test -run '^$' -bench . -benchtime 1x ./engine
//
// Every job is a one-shot job at a given instant, so that dense load is
// the same work for every engine (robfig gets an equivalent custom
// Schedule, gocron a OneTimeJob), except in BenchmarkEverySecond1k: 1,000
// jobs every second for 10 seconds, jobclock's at frequency Second (which
// its collection's quota allows), robfig/cron's "@every 1s". In
// BenchmarkBurst100k, BenchmarkSteady10kPerSecond and
// BenchmarkEverySecond1k, the loads that compare engines doing the same
// work, after registering and before the engine starts and the wait for
// the first due instant, the benchmark collects the garbage and returns
// the memory it freed to the operating system (debug.FreeOSMemory), the
// same for every engine: the load measures the engine, not the collection
// of what registering left, and runs without spare memory that engines
// before it in the process left mapped (pages already touched spare the
// page faults it takes in a process of its own). BenchmarkOpsAt1M is not
// such a load: it times one engine's single operations at its steady
// state, as in a user's long-running process, which keeps its heap
// mapped. So it only collects the garbage (runtime.GC), after the engine
// has started, and its operations reuse the pages registering touched:
// returned to the system, they would be touched again for the first time
// (about 0.3 minor page faults per add, against 0.01), which a process
// at its steady state does not do. What an engine before it left live still raises
// its collector's goal (gocron's unfinished burst leaves about 50 MB):
// compare engines each in a process of its own, -test.bench
// 'Burst100k/robfig$' and so on. The burst and steady loads
// also run "jobclock-nohistory": jobclock with Config.HistoryPerJob NoHistory, which keeps no history as
// robfig/cron and gocron keep none; and "jobclock-otel": jobclock opted in
// to package telemetry with the OpenTelemetry SDK, every attempt traced
// (sampled, batched to an exporter that drops the spans) and measured by
// the Prometheus exporter; plain "jobclock" has no Observer, as a host
// that does not observe it. The flag -burstprofile=prefix writes a
// CPU profile (prefix-<engine>.cpu) and an allocation profile
// (prefix-<engine>.allocs, read with -base prefix-<engine>.allocs0) of
// each burst alone, without the registration before it; -bursttrace=prefix
// writes an execution trace of it (prefix-<engine>.trace, read with go
// tool trace or golang.org/x/exp/trace). Metrics:
//
//	ns/job, B/job     registering N jobs (time and live heap per job)
//	burst-s           from the instant 100,000 jobs are due until the last executor call
//	                  (robfig: job function; gocron: task) has begun
//	cpu-us/occ        process CPU time per occurrence during the burst (until the last
//	                  has started) or the steady load
//	cpu-stop-us/occ   the same, until Stop has returned: with the work that follows the
//	                  last start (jobclock stores the outcomes and history then)
//	p50-ms, p99-ms    lateness (start minus due) at 10,000 occurrences per second
//	allocs/occ, B/occ heap allocations per occurrence during the burst (until the last has
//	                  started), counted by the runtime
//	gc, faults/occ    garbage collections during the burst, and minor page faults per
//	                  occurrence (pages of memory touched for the first time); both
//	                  count the whole process (getrusage), the benchmark's own
//	                  goroutines with the engine's, so faults/occ is approximate; each GC
//	                  cycle marks the engine's whole live heap: the burst's CPU depends on
//	                  whether its garbage outgrows what GOGC leaves above that heap
//	procs             the burst's processor time, summed over the process's threads
//	                  (/proc/self/task/*/schedstat), divided by its wall time: how many
//	                  of the machine's processors the engine used until the last start
//	procs-waited      the same for the time those threads waited for a processor
//	                  while runnable (other processes' work took it): procs plus
//	                  procs-waited is how many the engine would have used on an idle
//	                  machine (its spinning threads included); 0 where schedstat is
//	                  not readable
//	lost              occurrences that never started
//	add-us, get-us, remove-us   one operation while 1,000,000 jobs are scheduled
package engine
