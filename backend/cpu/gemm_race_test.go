//go:build race

package cpu

// The race detector makes sync.Pool drop buffers at random, so tests of
// buffer reuse cannot hold under it.
func init() { raceEnabled = true }
