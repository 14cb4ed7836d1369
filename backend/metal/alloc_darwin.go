//go:build darwin && cgo

package metal

import (
	"errors"
	"unsafe"

	"github.com/progrium/darwinkit/macos/metal"
	"github.com/progrium/darwinkit/objc"
)

// newBuffer allocates a shared-storage buffer: on Apple silicon its
// contents are ordinary host memory that the GPU reads and writes in
// place, so a GPU array's Storage.Bytes is the buffer itself and reading
// a result copies nothing. Buffers are hazard-tracked, so Metal orders
// accesses across command buffers; within one the queue places barriers.
// The allocator (bufcache.go) calls this only on a cache miss.
func (m *mtlDriver) newBuffer(size int) (unsafe.Pointer, []byte, error) {
	var b metal.BufferObject
	var p unsafe.Pointer
	objc.WithAutoreleasePool(func() {
		b = m.dev.NewBufferWithLengthOptions(uint(size), metal.ResourceStorageModeShared|metal.ResourceHazardTrackingModeTracked)
		if !b.IsNil() {
			p = b.Contents()
		}
	})
	if b.IsNil() {
		return nil, nil, errors.New("Metal could not allocate the buffer")
	}
	if p == nil {
		releaseHandle(b.Ptr())
		return nil, nil, errors.New("the buffer has no CPU-visible contents")
	}
	return b.Ptr(), unsafe.Slice((*byte)(p), size), nil
}
