package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime/metrics"
	"strconv"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// processCPU is the CPU time (user and system) this process has used.
func processCPU() time.Duration {
	cpu, _ := processUsage()
	return cpu
}

// processUsage is the CPU time (user and system) this process has used,
// and the context switches of its threads so far, voluntary (a thread that
// blocked: a goroutine scheduler with nothing to run parks its thread) and
// involuntary (preempted): one getrusage for both.
func processUsage() (cpu time.Duration, switches int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), ru.Nvcsw + ru.Nivcsw
}

// clockTick is the unit of the CPU times in /proc/PID/stat (USER_HZ, 100 on
// every Linux this runs on).
const clockTick = 10 * time.Millisecond

// serverCPU reads the CPU time a local PostgreSQL server has used: the
// postmaster, every process it started, and what its exited children used.
// It finds the postmaster as the parent of a backend of pool.
type serverCPU struct {
	postmaster int
}

// newServerCPU returns nil when the server's processes cannot be read (a
// server on another machine).
func newServerCPU(ctx context.Context, pool *pgxpool.Pool) *serverCPU {
	var backend int
	if err := pool.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		return nil
	}
	f, err := procStat(backend)
	if err != nil || f.ppid <= 1 {
		return nil
	}
	if _, err := procStat(f.ppid); err != nil {
		return nil
	}
	return &serverCPU{postmaster: f.ppid}
}

// read returns the server's CPU time so far; nil reads 0.
func (s *serverCPU) read() time.Duration {
	if s == nil {
		return 0
	}
	pm, err := procStat(s.postmaster)
	if err != nil {
		return 0
	}
	total := pm.utime + pm.stime + pm.cutime + pm.cstime
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == s.postmaster {
			continue
		}
		f, err := procStat(pid)
		if err != nil || f.ppid != s.postmaster {
			continue
		}
		total += f.utime + f.stime
	}
	return time.Duration(total) * clockTick
}

type statFields struct {
	ppid                         int
	utime, stime, cutime, cstime int64
}

// procStat reads the fields of /proc/PID/stat that serverCPU needs.
func procStat(pid int) (statFields, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return statFields{}, err
	}
	// The command name may hold spaces and parentheses: the fields
	// start after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return statFields{}, fmt.Errorf("/proc/%d/stat: no ')'", pid)
	}
	f := bytes.Fields(b[i+1:])
	// f[0] is field 3 (state): field k is f[k-3].
	if len(f) < 15 {
		return statFields{}, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	num := func(k int) int64 {
		v, _ := strconv.ParseInt(string(f[k-3]), 10, 64)
		return v
	}
	return statFields{ppid: int(num(4)), utime: num(14), stime: num(15), cutime: num(16), cstime: num(17)}, nil
}

// meter samples the wall clock, this process's CPU and the server's CPU.
type meter struct {
	server *serverCPU // nil: no server (SQLite) or not readable
}

type sample struct {
	at      time.Time
	process time.Duration
	server  time.Duration
	cs      int64  // context switches of this process so far
	allocs  uint64 // heap allocations of this process so far
	bytes   uint64 // and their bytes
}

func (m meter) sample() sample {
	mem := []metrics.Sample{{Name: "/gc/heap/allocs:objects"}, {Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(mem)
	cpu, cs := processUsage()
	return sample{at: time.Now(), process: cpu, server: m.server.read(), cs: cs,
		allocs: mem[0].Value.Uint64(), bytes: mem[1].Value.Uint64()}
}

// allocsPerOp returns the heap allocations and their bytes per operation
// between a and b.
func allocsPerOp(a, b sample, ops int) (allocs, bytes float64) {
	return float64(b.allocs-a.allocs) / float64(ops), float64(b.bytes-a.bytes) / float64(ops)
}

// switchesPerOp returns the context switches of this process per
// operation between a and b.
func switchesPerOp(a, b sample, ops int) float64 {
	return float64(b.cs-a.cs) / float64(ops)
}

// perOp returns the process and server CPU per operation between a and b,
// in microseconds; the server's is NaN without a server.
func (m meter) perOp(a, b sample, ops int) (process, server float64) {
	process = float64(b.process-a.process) / float64(time.Microsecond) / float64(ops)
	server = nan
	if m.server != nil {
		server = float64(b.server-a.server) / float64(time.Microsecond) / float64(ops)
	}
	return process, server
}
