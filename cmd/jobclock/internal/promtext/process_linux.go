package promtext

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// userHZ is the unit of the CPU times in /proc/self/stat (USER_HZ, 100 on
// every Linux platform Go supports).
const userHZ = 100

// processFamilies returns the process's metrics read from /proc, under the
// names and help texts of the Prometheus client's process collector; what
// cannot be read is left out.
func processFamilies() []family {
	var fams []family
	if st, err := os.ReadFile("/proc/self/stat"); err == nil {
		// The fields after the command name, which is in parentheses.
		if i := bytes.LastIndexByte(st, ')'); i >= 0 {
			f := strings.Fields(string(st[i+1:]))
			field := func(n int) float64 { // n counts from 1 as in proc(5)
				if n-3 >= len(f) {
					return 0
				}
				v, _ := strconv.ParseFloat(f[n-3], 64)
				return v
			}
			fams = append(fams,
				counter("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", (field(14)+field(15))/userHZ),
				gauge("process_virtual_memory_bytes", "Virtual memory size in bytes.", field(23)),
				gauge("process_resident_memory_bytes", "Resident memory size in bytes.", field(24)*float64(os.Getpagesize())))
			if boot := bootTime(); boot > 0 {
				fams = append(fams, gauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds.", boot+field(22)/userHZ))
			}
		}
	}
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		fams = append(fams, gauge("process_open_fds", "Number of open file descriptors.", float64(len(fds))))
	}
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil {
		fams = append(fams, gauge("process_max_fds", "Maximum number of open file descriptors.", float64(lim.Cur)))
	}
	if syscall.Getrlimit(syscall.RLIMIT_AS, &lim) == nil {
		fams = append(fams, gauge("process_virtual_memory_max_bytes", "Maximum amount of virtual memory available in bytes.", float64(lim.Cur)))
	}
	if in, out, ok := networkBytes(); ok {
		fams = append(fams,
			counter("process_network_receive_bytes_total", "Number of bytes received by the process over the network.", in),
			counter("process_network_transmit_bytes_total", "Number of bytes sent by the process over the network.", out))
	}
	return fams
}

// bootTime returns the system's boot time in seconds since 1970 (btime in
// /proc/stat), 0 if unknown.
func bootTime() float64 {
	st, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(st)) {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			t, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return t
		}
	}
	return 0
}

// networkBytes returns InOctets and OutOctets of the IpExt lines of
// /proc/self/net/netstat.
func networkBytes() (in, out float64, ok bool) {
	st, err := os.ReadFile("/proc/self/net/netstat")
	if err != nil {
		return 0, 0, false
	}
	var names []string
	for line := range strings.Lines(string(st)) {
		rest, found := strings.CutPrefix(line, "IpExt:")
		if !found {
			continue
		}
		if names == nil {
			names = strings.Fields(rest)
			continue
		}
		values := strings.Fields(rest)
		for i, name := range names {
			if i >= len(values) {
				break
			}
			v, _ := strconv.ParseFloat(values[i], 64)
			switch name {
			case "InOctets":
				in, ok = v, true
			case "OutOctets":
				out = v
			}
		}
	}
	return in, out, ok
}
