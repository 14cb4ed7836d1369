//go:build darwin && cgo

package metal

import (
	"fmt"
	"os"

	"github.com/progrium/darwinkit/macos/metal"
	"github.com/progrium/darwinkit/objc"
)

// openHost opens the system's default Metal device and builds the host
// over it: command queue, allocator and pipeline cache, tuned by the
// FATHOM_METAL_* variables. array.Eval reaches it through gpuBackend
// (device.go), the ops layer through Run, Alloc and Synchronize.
func openHost() (*host, error) { return openHostEnv(os.Getenv) }

// openHostEnv is openHost with the environment read through getenv; the
// tests open extra hosts with other limits.
func openHostEnv(getenv func(string) string) (*host, error) {
	p, err := shimCreateDevice()
	if err != nil {
		return nil, err
	}
	dev := metal.DeviceObject{Object: objc.ObjectFrom(p)}
	var (
		name        string
		unified     bool
		workingSet  uint64
		maxLength   uint
		maxTGMemory uint
		queue       metal.CommandQueueObject
	)
	objc.WithAutoreleasePool(func() {
		name = dev.Name()
		// darwinkit reads BOOL properties through a 1-byte libffi return slot
		// that may be written 8 bytes wide: the shim reads it in Objective-C.
		unified = shimHasUnifiedMemory(p)
		workingSet = dev.RecommendedMaxWorkingSetSize()
		maxLength = dev.MaxBufferLength()
		maxTGMemory = dev.MaxThreadgroupMemoryLength()
		if unified {
			queue = dev.NewCommandQueue()
		}
	})
	if !unified {
		releaseHandle(p)
		return nil, fmt.Errorf("the GPU %q has no unified memory: fathom's GPU backend needs Apple silicon", name)
	}
	if queue.IsNil() {
		releaseHandle(p)
		return nil, fmt.Errorf("the GPU %q gave no command queue", name)
	}
	// darwinkit returns zero for a message the object does not answer
	if workingSet == 0 || maxLength == 0 {
		releaseHandle(queue.Ptr())
		releaseHandle(p)
		return nil, fmt.Errorf("the GPU %q reports no memory sizes (working set %d, largest buffer %d)", name, workingSet, maxLength)
	}
	cfg, err := loadConfig(getenv, int64(workingSet))
	if err != nil {
		releaseHandle(queue.Ptr())
		releaseHandle(p)
		return nil, err
	}
	archive, err := openArchive(p, name, getenv)
	if err != nil {
		releaseHandle(queue.Ptr())
		releaseHandle(p)
		return nil, err
	}
	drv := &mtlDriver{dev: dev, queue: queue, archive: archive}
	cache := newBufCache(cfg, int(maxLength), drv.newBuffer, releaseHandle)
	h := newHost(drv, cfg, cache, libraryUnit)
	h.pipes.maxTGMemory = int(maxTGMemory)
	return h, nil
}
