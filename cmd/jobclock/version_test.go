package main

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionText(t *testing.T) {
	lib := &debug.Module{Path: libraryPath, Version: "v1.2.0"}
	tests := []struct {
		name string
		info debug.BuildInfo
		want string
	}{
		{name: "release", info: debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v1.2.0"}, Deps: []*debug.Module{lib},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2026-01-05T09:00:00Z"}, {Key: "vcs.modified", Value: "false"}}},
			want: "jobclock v1.2.0 (commit 0123456789ab, 2026-01-05T09:00:00Z; library github.com/jobclock/scheduler v1.2.0; go1.26.0)"},
		{name: "modified checkout", info: debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"},
			Deps:     []*debug.Module{{Path: libraryPath, Version: "v0.0.0", Replace: &debug.Module{Path: "../.."}}},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "true"}}},
			want: "jobclock (devel) (commit abc+modified; library github.com/jobclock/scheduler v0.0.0 => ../..; go1.26.0)"},
		{name: "no build stamp", info: debug.BuildInfo{GoVersion: "go1.26.0"}, want: "jobclock (devel) (go1.26.0)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := versionText(&tt.info); got != tt.want {
				t.Errorf("versionText() = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestVersionCommand runs "jobclock version" on the test binary, which
// has build information but no commit.
func TestVersionCommand(t *testing.T) {
	code, stdout, stderr := runCLI(t, "", "version")
	if code != 0 || !strings.HasPrefix(stdout, "jobclock ") || !strings.Contains(stdout, "go1.") || stderr != "" {
		t.Errorf("version = %d, %q, %q; want 0 and a line naming the version", code, stdout, stderr)
	}
	if code, _, stderr := runCLI(t, "", "version", "-x"); code != 2 || !strings.Contains(stderr, "Usage: jobclock version") {
		t.Errorf("version -x = %d, %q; want 2 and the usage", code, stderr)
	}
}
