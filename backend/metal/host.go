package metal

import (
	"math"
	"slices"

	"github.com/fathom-go/fathom/array"
)

// host is the Metal host of one device: allocator, compiled pipelines and
// command queue. It is platform-independent; darwin builds one over the
// shim (device_darwin.go), the tests over a fake driver.
type host struct {
	cache *bufCache
	pipes *pipeCache
	q     *cmdQueue
}

func newHost(drv driver, cfg config, cache *bufCache, source func(string, string) (string, string, error)) *host {
	h := &host{cache: cache, pipes: newPipeCache(drv, source), q: newCmdQueue(drv, cache, cfg)}
	cache.onFull = func() {
		h.q.mu.Lock()
		h.q.drainLocked()
		h.q.mu.Unlock()
	}
	return h
}

// alloc returns device storage of n bytes. When memory runs out it waits
// for the queued GPU work (whose buffers may then be freed) and collects
// garbage before it gives up with an error.
func (h *host) alloc(n int) (*array.Storage, error) { return h.cache.allocWaiting(n) }

// run checks every launch and builds its pipeline (compiling libraries on
// first use) before encoding any, so a bad launch encodes nothing. A
// launch whose threadgroup is larger than its pipeline allows is fitted
// to the pipeline (fitLaunch), or fails if its kernel needs that group.
func (h *host) run(ls []Launch) error {
	pipes := make([]pipeline, len(ls))
	fitted := false
	for i := range ls {
		if err := checkLaunch(&ls[i]); err != nil {
			return err
		}
		l := &ls[i]
		p, err := h.pipes.get(l)
		if err != nil {
			return err
		}
		if n := l.Group[0] * l.Group[1] * l.Group[2]; n > p.maxThreads {
			// The pipeline allows fewer threads than the plan asked for
			// (register-heavy kernels): shrink the group as the launch
			// says, in a copy, as ls is the caller's.
			f, err := fitLaunch(*l, p.maxThreads, p.simdWidth)
			if err != nil {
				return err
			}
			if !fitted {
				ls, fitted = slices.Clone(ls), true
			}
			ls[i] = f
			if err := checkLaunch(&ls[i]); err != nil {
				return err
			}
		}
		pipes[i] = p
	}
	return h.q.run(ls, pipes)
}

// synchronize waits for the work queued so far and returns the first
// failure since the last synchronize (as an executor reports it).
func (h *host) synchronize() error {
	first, _ := h.q.synchronize()
	return first
}

// checkLaunch rejects a launch Metal would reject by crashing the process
// (or silently misrun): sizes out of range, too many arguments, offsets
// outside their buffers.
func checkLaunch(l *Launch) error {
	if l.Library == "" || l.Kernel == "" {
		return array.Errorf("metal.Run", "launch without library or kernel name (%q, %q)", l.Library, l.Kernel)
	}
	for i := range 3 {
		if l.Grid[i] < 1 || uint64(l.Grid[i]) > math.MaxUint32 || l.Group[i] < 1 || l.Group[i] > 1024 {
			return array.Errorf("metal.Run", "kernel %s: grid %v and threadgroup %v need every component >= 1, below 2^32 in the grid and at most 1024 in the threadgroup",
				l.Kernel, l.Grid, l.Group)
		}
	}
	if n := l.Group[0] * l.Group[1] * l.Group[2]; n > 1024 {
		return array.Errorf("metal.Run", "kernel %s: threadgroup %v has %d threads (at most 1024)", l.Kernel, l.Group, n)
	}
	n := len(l.Buffers)
	if len(l.Params) > 0 {
		n++
	}
	if n > maxBufferArgs {
		return array.Errorf("metal.Run", "kernel %s: %d buffer arguments (at most %d)", l.Kernel, n, maxBufferArgs)
	}
	for i, a := range l.Buffers {
		if a.Mem == nil {
			return array.Errorf("metal.Run", "kernel %s: buffer %d has no memory", l.Kernel, i)
		}
		if m := len(a.Mem.Bytes()); a.Offset < 0 || a.Offset > m {
			return array.Errorf("metal.Run", "kernel %s: buffer %d: offset %d outside its %d bytes", l.Kernel, i, a.Offset, m)
		}
	}
	return nil
}
