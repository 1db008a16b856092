package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// instanceCount is how many processes drain the burst together.
const instanceCount = 3

// childEnv, when set, makes this program (or the test binary) an instance
// of the instances scenario instead: see runChild.
const childEnv = "JOBCLOCK_RIVER_CHILD"

// instances: n jobs due at one instant, drained by three processes sharing
// the database; from the moment all three are told to start until the
// last outcome is recorded. Each process writes a line per job run and per
// outcome recorded; this process counts them as the others do in-process.
func instances(ctx context.Context, e *env, sys system, c config) (result, error) {
	due := make([]time.Time, c.n)
	at := time.Now().Truncate(time.Millisecond)
	for i := range due {
		due[i] = at
	}
	s, err := newSide(ctx, e, sys, newTally(c.n), "")
	if err != nil {
		return result{}, err
	}
	where := s.where()
	defer e.drop(context.WithoutCancel(ctx), where)
	err = s.put(ctx, putSetup, due, nil)
	s.close()
	if err != nil {
		return result{}, err
	}

	exe, err := os.Executable()
	if err != nil {
		return result{}, err
	}
	t := newTally(c.n)
	procs := make([]*child, instanceCount)
	defer func() {
		for _, p := range procs {
			if p != nil {
				p.kill()
			}
		}
	}()
	for k := range procs {
		if procs[k], err = startChild(ctx, exe, e, sys, where, c.n, t); err != nil {
			return result{}, err
		}
	}
	for _, p := range procs {
		if err := p.waitReady(time.Minute); err != nil {
			return result{}, err
		}
	}
	a := e.meter.sample()
	for _, p := range procs {
		if err := p.send("start"); err != nil {
			return result{}, err
		}
	}
	err = t.wait(c.timeout)
	b := e.meter.sample()
	var cpu time.Duration
	for _, p := range procs {
		used, perr := p.finish()
		cpu += used
		err = errors.Join(err, perr)
	}
	if err = errors.Join(err, t.check()); err != nil {
		return result{}, err
	}
	v, err := newSide(ctx, e, sys, newTally(c.n), where)
	if err != nil {
		return result{}, err
	}
	err = v.verify(ctx, c.n, true)
	v.close()
	if err != nil {
		return result{}, err
	}
	r := newResult()
	r.v["instances.s"] = t.lastRecorded().Sub(a.at).Seconds()
	r.v["instances.cpu"] = float64(cpu) / float64(time.Microsecond) / float64(c.n)
	_, r.v["instances.server"] = e.meter.perOp(a, b, c.n)
	return r, nil
}

// child is one instance process.
type child struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	ready chan struct{}
	cpu   chan time.Duration
	done  chan error // the output's end
}

func startChild(ctx context.Context, exe string, e *env, sys system, where string, n int, t *tally) (*child, error) {
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), childEnv+"="+strings.Join([]string{string(sys), e.store, where, strconv.Itoa(n), e.firingWindow.String(), e.dsn}, "|"))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &child{cmd: cmd, in: in, ready: make(chan struct{}), cpu: make(chan time.Duration, 1), done: make(chan error, 1)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.line(sc.Text(), t)
		}
		p.done <- sc.Err()
	}()
	return p, nil
}

// line reads one line of a child's output: "ready", "run I NS",
// "record I NS", "cpu NS" or "error TEXT".
func (p *child) line(l string, t *tally) {
	f := strings.Fields(l)
	num := func(k int) int64 {
		if k >= len(f) {
			return -1
		}
		v, err := strconv.ParseInt(f[k], 10, 64)
		if err != nil {
			return -1
		}
		return v
	}
	switch {
	case len(f) == 0:
	case f[0] == "ready":
		close(p.ready)
	case f[0] == "run":
		t.run(int(num(1)), time.Unix(0, num(2)))
	case f[0] == "record":
		t.record(int(num(1)), time.Unix(0, num(2)))
	case f[0] == "cpu":
		p.cpu <- time.Duration(num(1))
	default:
		t.fail(fmt.Errorf("instance %d: %s", p.cmd.Process.Pid, l))
	}
}

func (p *child) waitReady(timeout time.Duration) error {
	select {
	case <-p.ready:
		return nil
	case err := <-p.done:
		return fmt.Errorf("an instance ended before it was ready: %v %v", err, p.cmd.Wait())
	case <-time.After(timeout):
		return fmt.Errorf("an instance was not ready after %s", timeout)
	}
}

func (p *child) send(cmd string) error {
	_, err := io.WriteString(p.in, cmd+"\n")
	return err
}

// finish tells the instance to stop and returns the CPU it used from its
// start until told to stop.
func (p *child) finish() (time.Duration, error) {
	if err := p.send("stop"); err != nil {
		return 0, err
	}
	var cpu time.Duration
	select {
	case cpu = <-p.cpu:
	case <-time.After(time.Minute):
		return 0, errors.New("an instance did not report its CPU")
	}
	<-p.done
	err := p.cmd.Wait()
	p.cmd = nil
	return cpu, err
}

func (p *child) kill() {
	if p.cmd != nil && p.cmd.Process != nil {
		p.cmd.Process.Kill()
		p.cmd.Wait()
	}
}

// runChild is an instance of the instances scenario: it opens the side
// named by spec over the tables another process put the jobs in, says
// "ready", starts on "start", reports each job run and outcome recorded,
// and on "stop" reports the CPU it used since "start" and stops.
func runChild(spec string) error {
	f := strings.SplitN(spec, "|", 6)
	if len(f) != 6 {
		return fmt.Errorf("%s=%q: want system|store|where|n|firing-window|dsn", childEnv, spec)
	}
	n, err := strconv.Atoi(f[3])
	if err != nil {
		return fmt.Errorf("%s: n: %w", childEnv, err)
	}
	window, err := time.ParseDuration(f[4])
	if err != nil {
		return fmt.Errorf("%s: firing-window: %w", childEnv, err)
	}
	ctx := context.Background()
	e, err := newEnv(ctx, f[1], f[5], os.TempDir())
	if err != nil {
		return err
	}
	defer e.close()
	e.firingWindow = window
	out := newLineOut(os.Stdout)
	defer out.close()
	t := newTally(n)
	t.out = out
	s, err := newSide(ctx, e, system(f[0]), t, f[2])
	if err != nil {
		return err
	}
	defer s.close()
	in := bufio.NewScanner(os.Stdin)
	out.printf("ready")
	out.flush()
	var cpu0 time.Duration
	for in.Scan() {
		switch in.Text() {
		case "start":
			cpu0 = processCPU()
			if err := s.start(ctx); err != nil {
				return err
			}
		case "stop":
			out.printf("cpu %d", processCPU()-cpu0)
			out.flush()
			stopCtx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			return errors.Join(s.stop(stopCtx), t.noted())
		}
	}
	return errors.New("stdin closed before stop")
}

// lineOut writes lines to w, buffered, flushed every few milliseconds.
type lineOut struct {
	mu   sync.Mutex
	w    *bufio.Writer
	quit chan struct{}
	wg   sync.WaitGroup
}

func newLineOut(w io.Writer) *lineOut {
	o := &lineOut{w: bufio.NewWriterSize(w, 64<<10), quit: make(chan struct{})}
	o.wg.Go(func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				o.flush()
			case <-o.quit:
				return
			}
		}
	})
	return o
}

func (o *lineOut) printf(format string, args ...any) {
	o.mu.Lock()
	fmt.Fprintf(o.w, format+"\n", args...)
	o.mu.Unlock()
}

func (o *lineOut) flush() {
	o.mu.Lock()
	o.w.Flush()
	o.mu.Unlock()
}

func (o *lineOut) close() {
	close(o.quit)
	o.wg.Wait()
	o.flush()
}
