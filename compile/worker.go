package compile

import (
	"container/list"
	"hash/maphash"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"
	"weak"

	"github.com/fathom-go/fathom/array"
)

// DefaultMaxTraces is the number of traces a worker keeps unless told
// otherwise with MaxTraces.
const DefaultMaxTraces = 128

// Worker is a context for calling compiled functions: one trace cache and
// one stream. The package's default worker serves Func.Call; a goroutine
// that calls compiled functions on its own makes a Worker, so its hot path
// shares no lock with other goroutines.
type Worker struct {
	c      *cache
	stream array.Stream
	regID  uint64
	closed atomic.Bool
}

// WorkerOption configures NewWorker.
type WorkerOption func(*workerOptions)

type workerOptions struct {
	max    int
	stream *array.Stream
}

// MaxTraces bounds the traces a worker keeps; past it the least recently
// used go first. n < 1 means 1.
func MaxTraces(n int) WorkerOption { return func(o *workerOptions) { o.max = max(n, 1) } }

// OnStream makes the worker record its work on s instead of a new stream
// of the default device.
func OnStream(s array.Stream) WorkerOption { return func(o *workerOptions) { o.stream = &s } }

// NewWorker returns a worker with its own cache and, unless OnStream says
// otherwise, a new stream on the default device.
func NewWorker(opts ...WorkerOption) *Worker {
	o := workerOptions{max: DefaultMaxTraces}
	for i, opt := range opts {
		if opt == nil {
			array.Panicf("compile.NewWorker", "option %d is nil", i)
		}
		opt(&o)
	}
	s := array.NewStream(array.DefaultDevice())
	if o.stream != nil {
		s = *o.stream
	}
	w := newWorker(s, o.max)
	runtime.AddCleanup(w, unregister, w.regID)
	return w
}

func newWorker(s array.Stream, maxTraces int) *Worker {
	c := &cache{max: maxTraces, entries: map[uint64][]*entry{}, flights: map[uint64][]*flight{}}
	return &Worker{c: c, stream: s, regID: register(c)}
}

// defaultWorker serves Func.Call. It records work on the default stream of
// the default device at the time of each call.
var defaultWorker = newWorker(array.Stream{Index: -1}, DefaultMaxTraces)

// DefaultWorker returns the worker that Func.Call uses.
func DefaultWorker() *Worker { return defaultWorker }

// Stream returns the stream the worker records its work on.
func (w *Worker) Stream() array.Stream {
	if w == nil {
		array.Panicf("compile.Worker.Stream", "nil *Worker")
	}
	if w == defaultWorker {
		return array.CurrentStream()
	}
	return w.stream
}

// Traces returns the number of traces in the worker's cache.
func (w *Worker) Traces() int {
	if w == nil {
		array.Panicf("compile.Worker.Traces", "nil *Worker")
	}
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	return w.c.lru.Len()
}

// Close empties the worker's cache and removes it from the registry.
// Calls in flight finish; a later Call panics with *array.Error. Close is
// idempotent. The default worker cannot be closed. A nil *Worker has no
// cache, so closing it does nothing, as a deferred Close expects.
func (w *Worker) Close() {
	if w == defaultWorker {
		array.Panicf("compile.Worker.Close", "the default worker cannot be closed")
	}
	if w == nil || w.closed.Swap(true) {
		return
	}
	unregister(w.regID)
	w.c.mu.Lock()
	w.c.closed = true
	w.c.entries = map[uint64][]*entry{}
	w.c.lru.Init()
	w.c.mu.Unlock()
}

// Call runs f on in with this worker's cache and stream: it replays f's
// trace for this call signature, tracing f first if there is none. Inside
// a transform (Grad, VJP, JVP, Vmap), where the inputs are tracers, f
// runs uncompiled, so transforms of compiled functions are exact.
func (w *Worker) Call(f *Func, in ...*array.Array) []*array.Array {
	if w == nil {
		array.Panicf("compile.Call", "nil *Worker")
	}
	if f == nil {
		array.Panicf("compile.Call", "nil *Func")
	}
	if w.closed.Load() {
		array.Panicf("compile.Call", "worker is closed")
	}
	if f.released.Load() {
		array.Panicf("compile.Call", "function %d was released", f.id)
	}
	tracing := false
	for i, x := range in {
		if x == nil {
			array.Panicf("compile.Call", "input %d is nil", i)
		}
		tracing = tracing || x.Tracer()
	}
	if tracing || disabled() {
		return runDirect(f, in)
	}
	s := w.Stream()
	return w.traceFor(f, in, s).replay(in, s)
}

// traceFor returns f's trace for a call on in recorded on s, from the
// cache or traced now.
func (w *Worker) traceFor(f *Func, in []*array.Array, s array.Stream) *trace {
	var sig keyBuf
	k := newKey(f, in, s, &sig)
	return w.c.get(k, f, func() *trace { return newTrace(f, in, s) })
}

// runDirect runs f uncompiled, with the same checks of what it returns
// as a trace makes, so that compiling or not changes no error. f gets a
// copy of in, which it may keep: the caller's (a Call's variadic
// arguments) then stays on the caller's stack.
func runDirect(f *Func, in []*array.Array) []*array.Array {
	outs := f.f(slices.Clone(in)...)
	checkOutputs(outs)
	return outs
}

func checkOutputs(outs []*array.Array) {
	if len(outs) == 0 {
		array.Panicf("compile.Call", "the function returned no arrays")
	}
	for i, o := range outs {
		if o == nil {
			array.Panicf("compile.Call", "output %d of the function is nil", i)
		}
	}
}

// key is a call signature: the function's id, the stream, the options,
// and each input's dtype and shape (rank only when shapeless). sig holds
// all of it; hash is a hash of sig, checked by a full comparison on a hit.
// A lookup's sig is on its caller's stack (keyBuf); the cache keeps a
// copy (stored).
type key struct {
	fn   uint64
	sig  []int64
	hash uint64
}

// keyBuf is room for the signature of a call of up to four inputs of
// rank up to four, so that a cache hit allocates none.
type keyBuf [6 + 4*6]int64

// stored returns k with a copy of its sig, for the cache to keep.
func (k key) stored() key {
	return key{fn: k.fn, sig: slices.Clone(k.sig), hash: k.hash}
}

var keySeed = maphash.MakeSeed()

// newKey returns the key of a call of f on in on stream s, its sig in buf
// if it fits.
func newKey(f *Func, in []*array.Array, s array.Stream, buf *keyBuf) key {
	sig := buf[:0]
	shapeless := int64(0)
	if f.opts.shapeless {
		shapeless = 1
	}
	sig = append(sig, int64(f.id), int64(s.Device.Type), int64(s.Device.Index), int64(s.Index), shapeless, int64(len(in)))
	for _, x := range in {
		sig = append(sig, int64(x.DType()), int64(x.Ndim()))
		if !f.opts.shapeless {
			for i := 0; i < x.Ndim(); i++ {
				sig = append(sig, int64(x.Dim(i)))
			}
		}
	}
	// The hash only lives as long as the process: the machine's byte
	// order is as good as any, and one call hashes the whole signature.
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(sig))), len(sig)*8)
	return key{fn: f.id, sig: sig, hash: maphash.Bytes(keySeed, b)}
}

// cache is a worker's traces: a hash map for lookup, a list for recency,
// and the traces being built (singleflight).
type cache struct {
	mu      sync.Mutex
	max     int
	closed  bool
	entries map[uint64][]*entry
	lru     list.List // of *entry, most recent first
	flights map[uint64][]*flight
}

type entry struct {
	key  key
	tr   *trace
	elem *list.Element
}

// flight is a trace being built; callers that miss on the same key wait
// for it instead of tracing again.
type flight struct {
	key   key
	done  chan struct{}
	tr    *trace
	fault any // what the tracing panicked with
}

type cacheRef struct{ p weak.Pointer[cache] }

func newCacheRef(c *cache) *cacheRef { return &cacheRef{weak.Make(c)} }
func (r *cacheRef) get() *cache      { return r.p.Value() }

func (c *cache) find(k key) *entry {
	for _, e := range c.entries[k.hash] {
		if slices.Equal(e.key.sig, k.sig) {
			return e
		}
	}
	return nil
}

// get returns the trace for k, building it with build on a miss.
func (c *cache) get(k key, f *Func, build func() *trace) *trace {
	c.mu.Lock()
	if e := c.find(k); e != nil {
		c.lru.MoveToFront(e.elem)
		c.mu.Unlock()
		return e.tr
	}
	for _, fl := range c.flights[k.hash] {
		if slices.Equal(fl.key.sig, k.sig) {
			c.mu.Unlock()
			<-fl.done
			if fl.fault != nil {
				panic(fl.fault)
			}
			return fl.tr
		}
	}
	fl := &flight{key: k.stored(), done: make(chan struct{})}
	c.flights[k.hash] = append(c.flights[k.hash], fl)
	c.mu.Unlock()

	defer func() {
		c.mu.Lock()
		l := c.flights[k.hash]
		if i := slices.Index(l, fl); i >= 0 {
			l = slices.Delete(l, i, i+1)
		}
		if len(l) == 0 {
			delete(c.flights, k.hash)
		} else {
			c.flights[k.hash] = l
		}
		// A function released (or a worker closed) while this trace was
		// being built keeps no trace: the check is under the lock that
		// erase takes, after the released flag is set.
		if fl.fault == nil && !c.closed && !f.released.Load() {
			e := &entry{key: fl.key, tr: fl.tr}
			e.elem = c.lru.PushFront(e)
			c.entries[k.hash] = append(c.entries[k.hash], e)
			for c.lru.Len() > c.max {
				c.remove(c.lru.Back().Value.(*entry))
			}
		}
		c.mu.Unlock()
		close(fl.done)
	}()
	func() {
		defer func() {
			if r := recover(); r != nil {
				fl.fault = r
				panic(r)
			}
		}()
		fl.tr = build()
	}()
	return fl.tr
}

func (c *cache) remove(e *entry) {
	c.lru.Remove(e.elem)
	l := c.entries[e.key.hash]
	if i := slices.Index(l, e); i >= 0 {
		l = slices.Delete(l, i, i+1)
	}
	if len(l) == 0 {
		delete(c.entries, e.key.hash)
	} else {
		c.entries[e.key.hash] = l
	}
}

// erase drops every trace of function id.
func (c *cache) erase(id uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for el := c.lru.Front(); el != nil; {
		next := el.Next()
		if e := el.Value.(*entry); e.key.fn == id {
			c.remove(e)
		}
		el = next
	}
}
