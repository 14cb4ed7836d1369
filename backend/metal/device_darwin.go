//go:build darwin && cgo

package metal

import (
	"errors"
	"os"
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
	// archive keeps compiled pipelines across runs (nil: off, or the
	// system has none).
	archive *pipeArchive
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
// (or function name) is kernel, in one shim call: through the pipeline
// archive when there is one (looked up there first; compiled and added on
// a miss).
func (m *mtlDriver) pipeline(lib unsafe.Pointer, kernel string) (pipeline, error) {
	var (
		pso  unsafe.Pointer
		info pipelineInfo
		err  error
	)
	if m.archive == nil {
		pso, info, err = shimPipelineNew(m.dev.Ptr(), lib, kernel, nil)
	} else {
		m.archive.use(func(h unsafe.Pointer) (bool, bool) {
			pso, info, err = shimPipelineNew(m.dev.Ptr(), lib, kernel, h)
			return info.hit, info.added
		})
	}
	if err != nil {
		return pipeline{}, err
	}
	return pipeline{id: pso, maxThreads: info.maxThreads, simdWidth: info.simdWidth, tgMemory: info.tgMemory}, nil
}

// openArchive opens the pipeline archive of the device named name (see
// pipearchive.go), or returns nil where it is off or unavailable: the
// archive only saves time, so its failures are not errors.
func openArchive(dev unsafe.Pointer, name string, getenv func(string) string) (*pipeArchive, error) {
	path, err := archivePath(getenv, os.UserCacheDir, name)
	if err != nil || path == "" {
		return nil, err
	}
	if err := prepareArchiveDir(path); err != nil {
		return nil, nil
	}
	h, _, _, err := shimArchiveOpen(dev, path)
	if err != nil {
		return nil, nil
	}
	return &pipeArchive{path: path, handle: h, save: shimArchiveSave}, nil
}

// nsErrorText returns an NSError's description; call it inside the
// autorelease pool the error lives in.
func nsErrorText(nserr unsafe.Pointer) string {
	if nserr == nil {
		return "unknown error (no NSError)"
	}
	return foundation.ErrorFrom(nserr).LocalizedDescription()
}
