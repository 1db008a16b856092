//go:build !linux

package promtext

// processFamilies returns nothing outside Linux, where the process's
// metrics are read from /proc.
func processFamilies() []family { return nil }
