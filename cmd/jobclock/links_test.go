package main

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// TestLinksNoHeavyExporters: the command links neither the Prometheus
// client nor OpenTelemetry's exporters, nor what they brought (protobuf,
// gRPC, grpc-gateway): its own promtext and otlp packages write /metrics
// and OTLP. Its tests import some of them, which go list -deps -test
// shows, so the check can fail.
func TestLinksNoHeavyExporters(t *testing.T) {
	heavy := []string{"github.com/prometheus/", "go.opentelemetry.io/otel/exporters/", "go.opentelemetry.io/proto/",
		"google.golang.org/protobuf/", "google.golang.org/grpc", "github.com/grpc-ecosystem/"}
	find := func(args ...string) []string {
		cmd := exec.Command("go", append([]string{"list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}"}, args...)...)
		out, err := cmd.Output()
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				t.Fatalf("go list %v: %v\n%s", args, err, ee.Stderr)
			}
			t.Fatalf("go list %v: %v", args, err)
		}
		var found []string
		for _, pkg := range strings.Fields(string(out)) {
			for _, prefix := range heavy {
				if strings.HasPrefix(pkg, prefix) {
					found = append(found, pkg)
				}
			}
		}
		return found
	}
	if found := find("."); len(found) > 0 {
		t.Errorf("the jobclock command links %d packages it should not: %v", len(found), found)
	}
	if found := find("-test", "."); len(found) == 0 {
		t.Error("the command's tests link none of the packages checked: the check above cannot see them")
	}
}
