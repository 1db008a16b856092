//go:build unix

// Package testproc runs the local test peers (Azurite's queue service and
// the Service Bus peer of testenv/node) as child processes of one test, so
// that fault tests can freeze, kill and restart them without disturbing
// the shared instances that scripts/test.sh starts for the other tests.
// It is used by tests only.
package testproc

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// NodeDir returns the module's testenv/node directory with its npm
// dependencies installed. When they are missing (or node is), the test is
// skipped with a message saying how to install them, or fails when
// CI=true.
func NodeDir(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		nd := filepath.Join(dir, "testenv", "node")
		if _, err := os.Stat(filepath.Join(nd, "package.json")); err == nil {
			_, errMods := os.Stat(filepath.Join(nd, "node_modules"))
			_, errNode := exec.LookPath("node")
			if errMods != nil || errNode != nil {
				missing(tb, "node and testenv/node's npm dependencies are needed; install them with: (cd testenv/node && npm ci)")
			}
			return nd
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			missing(tb, "testenv/node not found above the test's directory")
		}
		dir = parent
	}
}

func missing(tb testing.TB, msg string) {
	tb.Helper()
	if os.Getenv("CI") == "true" {
		tb.Fatal(msg)
	}
	tb.Skip(msg)
}

// FreePort returns a loopback TCP port that nothing listens on now.
func FreePort(tb testing.TB) int {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Process is a peer process. Its ports must be given in its arguments, so
// that Restart brings it back where its clients expect it.
type Process struct {
	tb    testing.TB
	name  string
	args  []string
	env   []string
	ready *regexp.Regexp

	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
}

// Start runs name with args (and env added to the environment) and waits,
// at most 30 s, until its output matches ready. The process is killed
// when the test ends.
func Start(tb testing.TB, ready *regexp.Regexp, env []string, name string, args ...string) *Process {
	tb.Helper()
	p := &Process{tb: tb, name: name, args: args, env: env, ready: ready}
	p.start()
	tb.Cleanup(p.Kill)
	return p
}

func (p *Process) start() {
	p.tb.Helper()
	p.tryStart(false)
}

// tryStart starts the process and waits until it is ready, and reports
// whether it is. With portTaken, a process that exits first saying that
// its address is in use (a port FreePort chose was taken before the
// process bound it) is reported not ready; any other failure fails the
// test.
func (p *Process) tryStart(portTaken bool) bool {
	p.tb.Helper()
	p.out = new(syncBuffer)
	p.cmd = exec.Command(p.name, p.args...)
	p.cmd.Env = append(os.Environ(), p.env...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		p.tb.Fatalf("start %s: %v", p.name, err)
	}
	p.done = make(chan struct{})
	go func() { p.cmd.Wait(); close(p.done) }()
	deadline := time.Now().Add(30 * time.Second)
	for !p.ready.MatchString(p.out.String()) {
		select {
		case <-p.done:
			if portTaken && strings.Contains(p.out.String(), "EADDRINUSE") {
				return false
			}
			p.tb.Fatalf("%s exited before it was ready:\n%s", p.name, p.out)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.Kill()
			p.tb.Fatalf("%s not ready within 30s:\n%s", p.name, p.out)
		}
	}
	return true
}

// startOnFreePorts starts a process on n ports that FreePort chooses
// (args makes its arguments from them), as Start does, choosing again,
// at most twice, when one of them is taken before the process binds it.
func startOnFreePorts(tb testing.TB, n int, ready *regexp.Regexp, env []string, name string, args func(ports []int) []string) (*Process, []int) {
	tb.Helper()
	for try := 1; ; try++ {
		ports := make([]int, n)
		for i := range ports {
			ports[i] = FreePort(tb)
		}
		p := &Process{tb: tb, name: name, args: args(ports), env: env, ready: ready}
		if p.tryStart(try < 3) {
			tb.Cleanup(p.Kill)
			return p, ports
		}
		tb.Logf("%s: a port was taken before it bound it; choosing again", name)
	}
}

// Freeze stops the process (SIGSTOP): connections stay open, nothing is
// answered.
func (p *Process) Freeze() {
	p.tb.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		p.tb.Fatalf("freeze %s: %v", p.name, err)
	}
}

// Kill kills the process (SIGKILL), as a crash would, and waits for it to
// go; the kernel then resets its connections. Killing a process that has
// gone is harmless.
func (p *Process) Kill() {
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	_ = p.cmd.Process.Kill()
	<-p.done
}

// Restart starts the process again, with the same arguments, after Kill.
func (p *Process) Restart() {
	p.tb.Helper()
	p.Kill()
	p.start()
}

// KillDuringCall freezes the process, starts call (which must need the
// process to answer), checks that it is still waiting half a second later,
// then kills the process, as a crashed host would go. It returns how long
// call took in all and its error; the test fails when call returns
// before the kill or is still running limit after it.
func (p *Process) KillDuringCall(limit time.Duration, call func() error) (time.Duration, error) {
	p.tb.Helper()
	p.Freeze()
	type outcome struct {
		err  error
		took time.Duration
	}
	done := make(chan outcome, 1)
	start := time.Now()
	go func() {
		err := call()
		done <- outcome{err, time.Since(start)}
	}()
	select {
	case o := <-done:
		p.tb.Fatalf("a call to frozen %s returned at once: %v", p.name, o.err)
	case <-time.After(500 * time.Millisecond):
	}
	p.Kill()
	select {
	case o := <-done:
		return o.took, o.err
	case <-time.After(limit):
		p.tb.Fatalf("a call to %s was still running %v after the process died", p.name, limit)
		return 0, nil
	}
}

// Output is what the process wrote so far (since its last start).
func (p *Process) Output() string { return p.out.String() }

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(b)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Azurite starts Azurite's queue service in memory on a free port and
// returns it with its endpoint for devstoreaccount1
// ("http://127.0.0.1:PORT/devstoreaccount1/").
func Azurite(tb testing.TB) (*Process, string) {
	tb.Helper()
	dir := NodeDir(tb)
	p, ports := startOnFreePorts(tb, 1, regexp.MustCompile(`successfully listens on http://127\.0\.0\.1:\d+`), nil,
		filepath.Join(dir, "node_modules", ".bin", "azurite-queue"), func(ports []int) []string {
			return []string{"--queueHost", "127.0.0.1", "--queuePort", fmt.Sprint(ports[0]), "--inMemoryPersistence", "--disableTelemetry"}
		})
	return p, fmt.Sprintf("http://127.0.0.1:%d/devstoreaccount1/", ports[0])
}

// ServiceBusPeer starts the Service Bus peer (testenv/node/sbpeer.js) on
// free ports, knowing the shared access key keyName=key, and returns it
// with its AMQP address (host:port) and the base URL of its HTTP API.
func ServiceBusPeer(tb testing.TB, keyName, key string) (p *Process, addr, api string) {
	tb.Helper()
	dir := NodeDir(tb)
	p, ports := startOnFreePorts(tb, 2, regexp.MustCompile(`"ev":"listening"`), []string{"SB_KEYS=" + keyName + "=" + key},
		"node", func(ports []int) []string {
			return []string{filepath.Join(dir, "sbpeer.js"), fmt.Sprint(ports[0]), "127.0.0.1", fmt.Sprint(ports[1])}
		})
	return p, fmt.Sprintf("127.0.0.1:%d", ports[0]), fmt.Sprintf("http://127.0.0.1:%d", ports[1])
}

// CPUTime returns the processor time, user and system, that the calling
// process has used so far. Benchmarks of calls to a local peer report it
// per call: unlike the elapsed time, it leaves out the peer's work and the
// time spent waiting for other processes on a busy machine.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ReportCPU reports the processor time the process used since start (a
// CPUTime reading) per iteration of b, as the metric "cpu-µs/op". Call it
// when the timed loop has ended.
func ReportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64((CPUTime()-start).Microseconds())/float64(b.N), "cpu-µs/op")
}
