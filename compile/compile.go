package compile

import (
	"os"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/graph"
)

// Func is a compiled function: f traced once per distinct call signature
// (input shapes, dtypes, device and stream), then replayed. Make one with
// Compile; call it with Call (on the default worker) or Worker.Call.
type Func struct {
	id       uint64
	f        graph.Fn
	opts     options
	released atomic.Bool
}

// Option configures Compile.
type Option func(*options)

type options struct {
	shapeless bool
}

// Shapeless makes one trace serve every call whose inputs have the same
// ranks and dtypes: output shapes are recomputed per call. A function
// whose shape logic depends on input shapes (a Reshape to fixed sizes, a
// Slice) cannot be shapeless; calling it with new shapes is an
// *array.Error.
func Shapeless() Option { return func(o *options) { o.shapeless = true } }

// ids are drawn from a counter: never reused, never taken from an address
// (two closures of one function literal share a code pointer, and a freed
// function's address can come back for another).
var nextID atomic.Uint64

// EnvDisable is the environment variable that turns compilation off
// process-wide when set to 1: Call then runs the function directly. It
// sets the state that Enable and Disable change at run time.
const EnvDisable = "FATHOM_DISABLE_COMPILE"

// off is read on every Call and may be flipped by any goroutine, so it is
// atomic rather than guarded by the caches' locks.
var off = func() *atomic.Bool {
	var b atomic.Bool
	b.Store(os.Getenv(EnvDisable) == "1")
	return &b
}()

func disabled() bool { return off.Load() }

// Disable turns compilation off process-wide (MLX's disable_compile):
// every Call runs its function directly, tracing nothing and reading no
// cache, until Enable. Calls already replaying a trace finish as they
// are. Cached traces are kept, to serve again after Enable.
func Disable() { off.Store(true) }

// Enable turns compilation back on (MLX's enable_compile), whatever
// EnvDisable said at start-up.
func Enable() { off.Store(false) }

// Enabled reports whether Call compiles: false after Disable, or from
// the start when EnvDisable is 1.
func Enabled() bool { return !off.Load() }

// Compile returns f compiled. Arrays that f closes over (captured arrays)
// become constants of its traces and live as long as the traces do.
func Compile(f graph.Fn, opts ...Option) *Func {
	if f == nil {
		array.Panicf("compile.Compile", "nil function")
	}
	fn := &Func{id: nextID.Add(1), f: f}
	for i, o := range opts {
		if o == nil {
			array.Panicf("compile.Compile", "option %d is nil", i)
		}
		o(&fn.opts)
	}
	// The cleanup holds only the id, so it does not keep fn alive.
	runtime.AddCleanup(fn, eraseEverywhere, fn.id)
	return fn
}

// Call runs f on the default worker.
func (f *Func) Call(in ...*array.Array) []*array.Array { return defaultWorker.Call(f, in...) }

// Release erases every trace of f from every worker's cache, dropping the
// traces' captured arrays. Calls in flight finish; a later Call panics
// with *array.Error. Release is idempotent, and happens by itself when f
// becomes unreachable. A nil *Func has no traces, so releasing it does
// nothing: a deferred Release need not check what Compile returned.
func (f *Func) Release() {
	if f == nil || f.released.Swap(true) {
		return
	}
	eraseEverywhere(f.id)
}

// Released reports whether Release has been called.
func (f *Func) Released() bool {
	if f == nil {
		array.Panicf("compile.Func.Released", "nil *Func")
	}
	return f.released.Load()
}

// The registry holds every live worker's cache weakly, so that erasing a
// function reaches all of them and a worker that becomes unreachable
// still goes away (its cleanup unregisters it).
var registry struct {
	mu     sync.Mutex
	caches map[uint64]*cacheRef
	next   uint64
}

func register(c *cache) uint64 {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if registry.caches == nil {
		registry.caches = map[uint64]*cacheRef{}
	}
	registry.next++
	registry.caches[registry.next] = newCacheRef(c)
	return registry.next
}

func unregister(id uint64) {
	registry.mu.Lock()
	delete(registry.caches, id)
	registry.mu.Unlock()
}

// eraseEverywhere removes function id's traces from every registered
// cache.
func eraseEverywhere(id uint64) {
	registry.mu.Lock()
	refs := make([]*cacheRef, 0, len(registry.caches))
	for _, r := range registry.caches {
		refs = append(refs, r)
	}
	registry.mu.Unlock()
	for _, r := range refs {
		if c := r.get(); c != nil {
			c.erase(id)
		}
	}
}

// Workers returns the number of registered worker caches (the default
// worker's included). Tests use it to see that closed and unreachable
// workers leave the registry.
func Workers() int {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	n := 0
	for _, r := range registry.caches {
		if r.get() != nil {
			n++
		}
	}
	return n
}
