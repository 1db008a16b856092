// Package size measures what importing jobclock costs a program: the size
// of small programs built with the default flags, and the number of
// packages outside the standard library they link. Run it with
//
//	cd bench && go test -run '^$' -bench . -benchtime 1x ./size
//
// Metrics: MB (binary size, 10^6 bytes) and pkgs (non-standard packages in
// the import graph, the program's own included).
package size

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// programs are built in this order; the first two are the floors. dir is
// where go build runs: the command is built in its own module, as users
// install it.
var programs = []struct{ name, dir, pkg string }{
	{"hello", ".", "./hello"},               // fmt.Println
	{"httpfloor", ".", "./httpfloor"},       // an http.Client over TLS
	{"core", ".", "./core"},                 // scheduler.New(memory.New(), nil)
	{"started", ".", "./started"},           // the same, started and stopped
	{"telemetry", ".", "./telemetry"},       // the same, opted in to package telemetry
	{"azure", ".", "./azure"},               // the same with action/azure registered
	{"sqliteopen", ".", "./sqliteopen"},     // sqlite.Open
	{"funcjob", ".", "./funcjob"},           // a Go function as a job on SQLite
	{"jobclock", "../../cmd/jobclock", "."}, // the command, every action type
}

func BenchmarkBinarySize(b *testing.B) {
	dir := b.TempDir()
	for _, p := range programs {
		b.Run(p.name, func(b *testing.B) {
			out := filepath.Join(dir, p.name)
			for b.Loop() {
				build := exec.Command("go", "build", "-o", out, p.pkg)
				build.Dir = p.dir
				if msg, err := build.CombinedOutput(); err != nil {
					b.Fatalf("go build %s: %v\n%s", p.pkg, err, msg)
				}
			}
			fi, err := os.Stat(out)
			if err != nil {
				b.Fatal(err)
			}
			deps := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", p.pkg)
			deps.Dir = p.dir
			list, err := deps.Output()
			if err != nil {
				b.Fatalf("go list %s: %v", p.pkg, err)
			}
			b.ReportMetric(float64(fi.Size())/1e6, "MB")
			b.ReportMetric(float64(len(strings.Fields(string(list)))), "pkgs")
			b.ReportMetric(0, "ns/op")
		})
	}
}
