//go:build !amd64 || noasm

package cpu

// threefryVec is nil where there is no assembly: threefryPairs hashes
// four blocks at a time in Go.
var (
	threefryVec   func(key *[2]uint32, p, q uint32, y0, y1 *uint32, n int)
	threefryLanes int
)
