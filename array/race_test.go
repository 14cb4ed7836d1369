//go:build race

package array

// The race detector slows the goroutine that runs cleanups, so buffers
// come back to the pool later than a collection.
func init() { raceEnabled = true }
