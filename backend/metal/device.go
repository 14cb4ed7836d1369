package metal

import (
	"runtime"
	"sync"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/metal/internal/plan"
)

// This file is what the ops layer calls. It is the same on every
// platform: openHost, which builds the host over the real device, exists
// only on darwin with cgo (backend_darwin.go); elsewhere it reports why
// Metal is unavailable (metal_other.go), and so does every function here.

var (
	hostOnce sync.Once
	theHost  *host
	hostErr  error // why there is no host: a reason, without the "Metal is unavailable" prefix
)

func getHost() (*host, error) {
	hostOnce.Do(func() { theHost, hostErr = openHost() })
	if hostErr != nil {
		return nil, unavailable(hostErr)
	}
	return theHost, nil
}

func unavailable(reason error) error {
	return array.Errorf("metal", "Metal is unavailable on %s/%s: %v", runtime.GOOS, runtime.GOARCH, reason)
}

// Available returns nil if the GPU can run work, or an *array.Error that
// says why not (the platform, the build, the device, or a malformed
// FATHOM_METAL_* variable).
func Available() error {
	_, err := getHost()
	return err
}

// Run encodes launches, in order, into the GPU's command stream. It does
// not wait for them: their results are in memory after Synchronize, which
// array.Eval calls before it returns. Outputs must be device memory from
// Alloc; inputs that are host memory (a CPU array's Storage) are copied to
// the device first. Compile errors, bad launches, memory exhaustion and a
// launch that reads memory whose work failed are returned; a failure the
// GPU reports while running is recorded on the memory the failed work
// writes (array.Storage.Fail), where every Eval that reads it finds it.
//
// Every GPU stream feeds one Metal command queue, so work on different
// streams runs in the order it was encoded.
func Run(s array.Stream, launches []Launch) error {
	if s.Device.Type != array.DeviceGPU {
		return array.Errorf("metal.Run", "stream %v is not on the GPU", s)
	}
	h, err := getHost()
	if err != nil {
		return err
	}
	return h.run(launches)
}

// Alloc returns GPU storage of nbytes bytes (shared memory: its Bytes are
// the buffer's contents, which the host may read after Synchronize). Its
// contents are arbitrary. The buffer returns to a cache when the Storage
// is collected. When memory runs out (FATHOM_METAL_MEMORY_LIMIT_MB,
// FATHOM_METAL_MAX_BUFFERS) the error says so.
func Alloc(nbytes int) (*array.Storage, error) {
	h, err := getHost()
	if err != nil {
		return nil, err
	}
	return h.alloc(nbytes)
}

// Synchronize waits until all GPU work encoded so far has run. Since the
// streams share one queue, it waits for every stream. A command buffer
// that failed is not reported here, to whichever caller synchronized
// first, but on the memory its work should have written
// (array.Storage.Err), to every Eval that reads it; Synchronize returns
// only a failure that could not be recorded so (host memory a launch
// wrote that is not a pooled Storage).
func Synchronize(s array.Stream) error {
	h, err := getHost()
	if err != nil {
		return err
	}
	_, lost := h.q.synchronize()
	return lost
}

// newExecutor returns a plan.Executor that encodes launches on stream s, for
// running a plan directly (the conformance suite does on a Mac). Results
// are in memory after its Synchronize; host memory that launches write is
// copied back then.
func newExecutor(s array.Stream) (*streamExecutor, error) {
	if s.Device.Type != array.DeviceGPU {
		return nil, array.Errorf("metal.newExecutor", "stream %v is not on the GPU", s)
	}
	h, err := getHost()
	if err != nil {
		return nil, err
	}
	return &streamExecutor{h: h}, nil
}

// streamExecutor runs launches on the GPU; see newExecutor.
type streamExecutor struct {
	h *host
}

var _ plan.Executor = (*streamExecutor)(nil)

// Run encodes one launch.
func (e *streamExecutor) Run(l Launch) error { return e.h.run([]Launch{l}) }

// Synchronize waits for every launch encoded so far and returns the
// first failure since the last Synchronize.
func (e *streamExecutor) Synchronize() error { return e.h.synchronize() }

// stats reports the GPU allocator's state (zero where Metal is
// unavailable).
func stats() memStats {
	h, err := getHost()
	if err != nil {
		return memStats{}
	}
	return h.cache.stats()
}

// clearCache releases every cached (freed) GPU buffer to the system.
func clearCache() {
	if h, err := getHost(); err == nil {
		h.cache.clear()
	}
}

// gpuBackend is what the scheduler sees of the GPU.
type gpuBackend struct{}

func init() { array.RegisterBackend(array.DeviceGPU, gpuBackend{}) }

// Available returns the reason alone: array.DeviceAvailable adds "Metal is
// unavailable on GOOS/GOARCH".
func (gpuBackend) Available() error {
	getHost()
	return hostErr
}

func (gpuBackend) Synchronize(s array.Stream) error { return Synchronize(s) }
