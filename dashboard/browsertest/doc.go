// Package browsertest drives the dashboard (package
// github.com/jobclock/scheduler/dashboard) in headless Chromium, as a person
// would, and takes the screenshots README shows. It holds tests only, in a
// module of its own, so that the library's go.mod does not list the
// browser driver:
//
//	cd dashboard/browsertest && go test .
//	go test ./dashboard/browsertest -update-screenshots   # from the repository root, rewrites docs/screenshots
package browsertest
