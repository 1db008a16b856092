package main

import (
	"fmt"
	"io"
	"runtime/debug"
	"strings"
)

// versionCmd prints the module version and the VCS commit jobclock was
// built from.
func versionCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintln(stderr, "Usage: jobclock version")
		return 2
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		fmt.Fprintln(stderr, "jobclock version: this binary holds no build information")
		return 1
	}
	fmt.Fprintln(stdout, versionText(info))
	return 0
}

// versionText describes the build in info in one line: "jobclock
// v1.2.0 (commit 0123abcdef01, 2026-01-05T09:00:00Z; library
// github.com/jobclock/scheduler v1.2.0; go1.26.0)". The commit is left
// out when the build did not stamp one (go run, go test, a build
// outside a checkout), and marked "+modified" when the work tree had
// changes.
func versionText(info *debug.BuildInfo) string {
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	version := info.Main.Version
	if version == "" {
		version = "(devel)"
	}
	var parts []string
	if rev := settings["vcs.revision"]; rev != "" {
		rev = rev[:min(len(rev), 12)]
		if settings["vcs.modified"] == "true" {
			rev += "+modified"
		}
		c := "commit " + rev
		if t := settings["vcs.time"]; t != "" {
			c += ", " + t
		}
		parts = append(parts, c)
	}
	for _, d := range info.Deps {
		if d.Path == libraryPath {
			v := d.Version
			if d.Replace != nil {
				v += " => " + d.Replace.Path
				if d.Replace.Version != "" {
					v += " " + d.Replace.Version
				}
			}
			parts = append(parts, "library "+d.Path+" "+v)
		}
	}
	parts = append(parts, info.GoVersion)
	return "jobclock " + version + " (" + strings.Join(parts, "; ") + ")"
}

// libraryPath is the module of the scheduler library jobclock embeds.
const libraryPath = "github.com/jobclock/scheduler"
