package promtext

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// gauge and counter make a family of one unlabelled sample.
func gauge(name, help string, v float64) family {
	return family{name: name, help: help, typ: "gauge", series: []series{{samples: []sample{{value: v}}}}}
}

func counter(name, help string, v float64) family {
	f := gauge(name, help, v)
	f.typ = "counter"
	return f
}

// The runtime/metrics samples the go_memstats_* families are made of, in
// the order of the constants below; reading them does not stop the world
// as runtime.ReadMemStats does.
var memSampleNames = [...]string{
	"/gc/heap/allocs:bytes", "/gc/heap/allocs:objects", "/gc/heap/frees:objects", "/gc/heap/tiny/allocs:objects",
	"/gc/heap/goal:bytes", "/gc/heap/objects:objects", "/gc/gogc:percent", "/gc/gomemlimit:bytes",
	"/memory/classes/total:bytes", "/memory/classes/heap/objects:bytes", "/memory/classes/heap/unused:bytes",
	"/memory/classes/heap/released:bytes", "/memory/classes/heap/free:bytes", "/memory/classes/heap/stacks:bytes",
	"/memory/classes/os-stacks:bytes", "/memory/classes/metadata/mspan/inuse:bytes", "/memory/classes/metadata/mspan/free:bytes",
	"/memory/classes/metadata/mcache/inuse:bytes", "/memory/classes/metadata/mcache/free:bytes",
	"/memory/classes/profiling/buckets:bytes", "/memory/classes/metadata/other:bytes", "/memory/classes/other:bytes",
}

const (
	allocBytes = iota
	allocObjects
	freeObjects
	tinyAllocObjects
	heapGoal
	heapObjects
	gogc
	gomemlimit
	totalBytes
	heapObjectBytes
	heapUnused
	heapReleased
	heapFree
	stacks
	osStacks
	mspanInuse
	mspanFree
	mcacheInuse
	mcacheFree
	profBuckets
	metadataOther
	otherBytes
)

// runtimeFamilies returns the Go runtime's metrics under the names and
// help texts of the Prometheus client's Go collector, computed from
// runtime/metrics as that collector does.
func runtimeFamilies() []family {
	samples := make([]metrics.Sample, len(memSampleNames))
	for i, name := range memSampleNames {
		samples[i].Name = name
	}
	metrics.Read(samples)
	v := func(i int) float64 {
		if samples[i].Value.Kind() == metrics.KindUint64 {
			return float64(samples[i].Value.Uint64())
		}
		return math.NaN()
	}
	st := debug.GCStats{PauseQuantiles: make([]time.Duration, 5)}
	debug.ReadGCStats(&st)
	threads, _ := runtime.ThreadCreateProfile(nil)
	heapInuse := v(heapObjectBytes) + v(heapUnused)
	heapIdle := v(heapReleased) + v(heapFree)
	// As in MemStats, tiny allocations count in both mallocs and frees.
	var lastGC float64
	if !st.LastGC.IsZero() {
		lastGC = float64(st.LastGC.UnixNano()) / 1e9
	}
	fams := []family{
		gcDurations(st),
		gauge("go_gc_gogc_percent", "Heap size target percentage configured by the user, otherwise 100. This value is set by the GOGC environment variable, and the runtime/debug.SetGCPercent function. Sourced from /gc/gogc:percent.", v(gogc)),
		gauge("go_gc_gomemlimit_bytes", "Go runtime memory limit configured by the user, otherwise math.MaxInt64. This value is set by the GOMEMLIMIT environment variable, and the runtime/debug.SetMemoryLimit function. Sourced from /gc/gomemlimit:bytes.", v(gomemlimit)),
		gauge("go_goroutines", "Number of goroutines that currently exist.", float64(runtime.NumGoroutine())),
		{name: "go_info", help: "Information about the Go environment.", typ: "gauge",
			series: []series{{labels: []label{{"version", runtime.Version()}}, samples: []sample{{value: 1}}}}},
		gauge("go_memstats_alloc_bytes", "Number of bytes allocated in heap and currently in use. Equals to /memory/classes/heap/objects:bytes.", v(heapObjectBytes)),
		counter("go_memstats_alloc_bytes_total", "Total number of bytes allocated in heap until now, even if released already. Equals to /gc/heap/allocs:bytes.", v(allocBytes)),
		gauge("go_memstats_buck_hash_sys_bytes", "Number of bytes used by the profiling bucket hash table. Equals to /memory/classes/profiling/buckets:bytes.", v(profBuckets)),
		counter("go_memstats_frees_total", "Total number of heap objects frees. Equals to /gc/heap/frees:objects + /gc/heap/tiny/allocs:objects.", v(freeObjects)+v(tinyAllocObjects)),
		gauge("go_memstats_gc_sys_bytes", "Number of bytes used for garbage collection system metadata. Equals to /memory/classes/metadata/other:bytes.", v(metadataOther)),
		gauge("go_memstats_heap_alloc_bytes", "Number of heap bytes allocated and currently in use, same as go_memstats_alloc_bytes. Equals to /memory/classes/heap/objects:bytes.", v(heapObjectBytes)),
		gauge("go_memstats_heap_idle_bytes", "Number of heap bytes waiting to be used. Equals to /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.", heapIdle),
		gauge("go_memstats_heap_inuse_bytes", "Number of heap bytes that are in use. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes", heapInuse),
		gauge("go_memstats_heap_objects", "Number of currently allocated objects. Equals to /gc/heap/objects:objects.", v(heapObjects)),
		gauge("go_memstats_heap_released_bytes", "Number of heap bytes released to OS. Equals to /memory/classes/heap/released:bytes.", v(heapReleased)),
		gauge("go_memstats_heap_sys_bytes", "Number of heap bytes obtained from system. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes + /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.", heapInuse+heapIdle),
		gauge("go_memstats_last_gc_time_seconds", "Number of seconds since 1970 of last garbage collection.", lastGC),
		counter("go_memstats_mallocs_total", "Total number of heap objects allocated, both live and gc-ed. Semantically a counter version for go_memstats_heap_objects gauge. Equals to /gc/heap/allocs:objects + /gc/heap/tiny/allocs:objects.", v(allocObjects)+v(tinyAllocObjects)),
		gauge("go_memstats_mcache_inuse_bytes", "Number of bytes in use by mcache structures. Equals to /memory/classes/metadata/mcache/inuse:bytes.", v(mcacheInuse)),
		gauge("go_memstats_mcache_sys_bytes", "Number of bytes used for mcache structures obtained from system. Equals to /memory/classes/metadata/mcache/inuse:bytes + /memory/classes/metadata/mcache/free:bytes.", v(mcacheInuse)+v(mcacheFree)),
		gauge("go_memstats_mspan_inuse_bytes", "Number of bytes in use by mspan structures. Equals to /memory/classes/metadata/mspan/inuse:bytes.", v(mspanInuse)),
		gauge("go_memstats_mspan_sys_bytes", "Number of bytes used for mspan structures obtained from system. Equals to /memory/classes/metadata/mspan/inuse:bytes + /memory/classes/metadata/mspan/free:bytes.", v(mspanInuse)+v(mspanFree)),
		gauge("go_memstats_next_gc_bytes", "Number of heap bytes when next garbage collection will take place. Equals to /gc/heap/goal:bytes.", v(heapGoal)),
		gauge("go_memstats_other_sys_bytes", "Number of bytes used for other system allocations. Equals to /memory/classes/other:bytes.", v(otherBytes)),
		gauge("go_memstats_stack_inuse_bytes", "Number of bytes obtained from system for stack allocator in non-CGO environments. Equals to /memory/classes/heap/stacks:bytes.", v(stacks)),
		gauge("go_memstats_stack_sys_bytes", "Number of bytes obtained from system for stack allocator. Equals to /memory/classes/heap/stacks:bytes + /memory/classes/os-stacks:bytes.", v(stacks)+v(osStacks)),
		gauge("go_memstats_sys_bytes", "Number of bytes obtained from system. Equals to /memory/classes/total:byte.", v(totalBytes)),
		gauge("go_sched_gomaxprocs_threads", "The current runtime.GOMAXPROCS setting, or the number of operating system threads that can execute user-level Go code simultaneously. Sourced from /sched/gomaxprocs:threads.", float64(runtime.GOMAXPROCS(0))),
		gauge("go_threads", "Number of OS threads created.", float64(threads)),
	}
	return fams
}

// gcDurations is the summary of the garbage collector's pauses: the
// minimum, quartiles and maximum of the recent pauses, their sum and
// count, from st (read with five PauseQuantiles).
func gcDurations(st debug.GCStats) family {
	s := series{}
	for i, q := range []string{"0", "0.25", "0.5", "0.75", "1"} {
		s.samples = append(s.samples, sample{le: q, value: st.PauseQuantiles[i].Seconds()})
	}
	s.samples = append(s.samples, sample{suffix: "_sum", value: st.PauseTotal.Seconds()}, sample{suffix: "_count", value: float64(st.NumGC)})
	return family{name: "go_gc_duration_seconds", help: "A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles.",
		typ: "summary", series: []series{s}}
}
