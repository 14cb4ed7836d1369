//go:build amd64 && !noasm

package cpu

import "golang.org/x/sys/cpu"

// threefryVec is the widest Threefry kernel of threefry_amd64.s this
// CPU runs (see internal/asmgen/threefry), and threefryLanes the number
// of blocks it hashes at a time.
var threefryVec, threefryLanes = func() (func(key *[2]uint32, p, q uint32, y0, y1 *uint32, n int), int) {
	switch {
	case cpu.X86.HasAVX512F:
		return threefryAVX512, 16
	case cpu.X86.HasAVX2:
		return threefryAVX2, 8
	}
	return nil, 0
}()
