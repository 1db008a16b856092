//go:build race

package scheduler_test

// raceBuild is true under the race detector, whose sync.Pool drops a
// quarter of what is put back: allocation counts run higher.
const raceBuild = true
