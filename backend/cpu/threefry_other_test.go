//go:build !amd64 || noasm

package cpu

type threefryKernel struct {
	name  string
	lanes int
	fn    func(key *[2]uint32, p, q uint32, y0, y1 *uint32, n int)
}

func threefryKernelsForTest() []threefryKernel { return nil }
