package testproc

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"testing"
)

// TestTryStartPortTaken: a process that exits because its port is in use
// is reported not ready when the caller may choose the port again, and
// one given a free port is ready.
func TestTryStartPortTaken(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("node is needed and missing")
		}
		t.Skip("node is not installed")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	listen := func(port int) *Process {
		return &Process{tb: t, name: "node", ready: regexp.MustCompile(`listening`),
			args: []string{"-e", fmt.Sprintf(`require("net").createServer().listen(%d, "127.0.0.1", () => console.log("listening"))`, port)}}
	}
	if p := listen(l.Addr().(*net.TCPAddr).Port); p.tryStart(true) {
		p.Kill()
		t.Fatal("a process whose port is taken was reported ready")
	}
	p := listen(FreePort(t))
	if !p.tryStart(true) {
		t.Fatalf("a process on a free port was not reported ready:\n%s", p.Output())
	}
	p.Kill()
}
