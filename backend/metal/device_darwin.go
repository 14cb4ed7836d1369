//go:build darwin && cgo

package metal

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/progrium/darwinkit/macos/foundation"
	"github.com/progrium/darwinkit/macos/metal"
	"github.com/progrium/darwinkit/objc"
)

// mtlDriver is the driver over a real device. Setup (compiling libraries,
// building pipelines, allocating buffers) goes through darwinkit, whose
// every message costs reflection and a libffi call but happens once per
// library, kernel or buffer; the per-dispatch path goes through the shim
// (executor_darwin.go).
type mtlDriver struct {
	dev   metal.DeviceObject
	queue metal.CommandQueueObject
}

// compile builds a library from MSL source. Fast math is off (mathMode
// safe with the precise functions on macOS 15 and later, fastMathEnabled
// off before: the shim asks which the system has), so NaN and infinity
// behave as on the CPU backend (isnan is not folded away); kernels that
// want the fast versions call metal::fast:: explicitly. The language
// version is the newest the system supports.
func (m *mtlDriver) compile(source string) (unsafe.Pointer, error) {
	var lib metal.LibraryObject
	var msg string
	objc.WithAutoreleasePool(func() {
		opts := metal.NewCompileOptions()
		shimSetPreciseMath(opts.Ptr())
		var nserr unsafe.Pointer
		lib = m.dev.NewLibraryWithSourceOptionsError(source, opts, unsafe.Pointer(&nserr))
		if lib.IsNil() {
			msg = nsErrorText(nserr)
		}
	})
	if lib.IsNil() {
		return nil, errors.New(msg)
	}
	return lib.Ptr(), nil
}

// pipeline builds the compute pipeline of the kernel whose [[host_name]]
// (or function name) is kernel.
func (m *mtlDriver) pipeline(lib unsafe.Pointer, kernel string) (pipeline, error) {
	var p pipeline
	var err error
	objc.WithAutoreleasePool(func() {
		l := metal.LibraryObject{Object: objc.ObjectFrom(lib)}
		f := l.NewFunctionWithName(kernel)
		if f.IsNil() {
			err = fmt.Errorf("the library has no kernel %q", kernel)
			return
		}
		defer releaseHandle(f.Ptr())
		var nserr unsafe.Pointer
		pso := m.dev.NewComputePipelineStateWithFunctionError(f, unsafe.Pointer(&nserr))
		if pso.IsNil() {
			err = errors.New(nsErrorText(nserr))
			return
		}
		p = pipeline{id: pso.Ptr(), maxThreads: int(pso.MaxTotalThreadsPerThreadgroup())}
	})
	return p, err
}

// nsErrorText returns an NSError's description; call it inside the
// autorelease pool the error lives in.
func nsErrorText(nserr unsafe.Pointer) string {
	if nserr == nil {
		return "unknown error (no NSError)"
	}
	return foundation.ErrorFrom(nserr).LocalizedDescription()
}
