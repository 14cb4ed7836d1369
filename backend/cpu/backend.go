package cpu

import "github.com/fathom-go/fathom/array"

// backend is the CPU's array.Backend. Its kernels are done when they
// return, so there is nothing to wait for; it exists so that
// array.ClearCache also releases the kernels' scratch.
type backend struct{}

func init() { array.RegisterBackend(array.DeviceCPU, backend{}) }

func (backend) Available() error { return nil }

func (backend) Synchronize(array.Stream) error { return nil }

// ClearScratch drops the packing and offset buffers the kernels keep,
// the spares a collection would not take included. A fused program's
// scratch goes with the program.
func (backend) ClearScratch() {
	pool32.clear()
	pool64.clear()
	c64Pool.clear()
	offsetPool.clear()
}
