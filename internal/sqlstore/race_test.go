//go:build race

package sqlstore

// raceBuild is true under the race detector, whose sync.Pool drops a
// quarter of what is put back.
const raceBuild = true
