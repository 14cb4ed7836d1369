package metal

import (
	"strings"
	"sync"
	"unsafe"

	"github.com/fathom-go/fathom/array"
)

// pipeline is a compiled compute pipeline, the largest threadgroup it
// can run (which depends on the kernel's register use) and its SIMD width
// (threadExecutionWidth; 0 means 32).
type pipeline struct {
	id         unsafe.Pointer // retained id<MTLComputePipelineState>
	maxThreads int
	simdWidth  int
	tgMemory   int // static threadgroup memory, bytes
}

// genPrefix starts the Library name of a generated kernel library (see
// Launch.Library).
const genPrefix = "gen:"

// pipeCache compiles each library once, at first use, and builds each
// pipeline once per (library, kernel). Failures are cached too: the
// sources do not change while the program runs, so a retry would fail
// again, after another compile. Callers that race on the same library
// wait for one compile.
type pipeCache struct {
	drv driver
	// source returns the unit of an embedded library ("unary.metal") that
	// holds kernel: the name it is compiled and cached under, and its MSL
	// (see libraryUnit).
	source func(library, kernel string) (unit, src string, err error)

	// maxTGMemory is the device's threadgroup memory in bytes
	// (maxThreadgroupMemoryLength; 0: unknown): a pipeline whose kernel
	// uses more fails by name.
	maxTGMemory int

	mu   sync.Mutex
	libs map[string]*libEntry // by unit name, or generated library name
	// kernels maps an embedded library and kernel ("lib\x00kernel") to
	// its unit's entry, so the unit is looked up once.
	kernels map[string]*libEntry
}

type libEntry struct {
	name string // the library, or the unit of an embedded one
	src  string
	once sync.Once
	lib  unsafe.Pointer // retained id<MTLLibrary>
	err  error

	mu    sync.Mutex
	pipes map[string]*pipeEntry
}

type pipeEntry struct {
	once sync.Once
	p    pipeline
	err  error
}

func newPipeCache(drv driver, source func(string, string) (string, string, error)) *pipeCache {
	return &pipeCache{drv: drv, source: source, libs: map[string]*libEntry{}, kernels: map[string]*libEntry{}}
}

// get returns the pipeline of l's kernel, compiling its library first if
// this is the library's first use.
func (c *pipeCache) get(l *Launch) (pipeline, error) {
	e := c.library(l)
	if e.err != nil {
		return pipeline{}, e.err
	}
	e.mu.Lock()
	pe := e.pipes[l.Kernel]
	if pe == nil {
		pe = &pipeEntry{}
		e.pipes[l.Kernel] = pe
	}
	e.mu.Unlock()
	pe.once.Do(func() {
		p, err := c.drv.pipeline(e.lib, l.Kernel)
		if err != nil {
			pe.err = array.Errorf("metal.Run", "kernel %s in library %s: %v", l.Kernel, e.name, err)
			return
		}
		if c.maxTGMemory > 0 && p.tgMemory > c.maxTGMemory {
			pe.err = array.Errorf("metal.Run", "kernel %s in library %s uses %d bytes of threadgroup memory; the device has %d",
				l.Kernel, e.name, p.tgMemory, c.maxTGMemory)
			return
		}
		pe.p = p
	})
	return pe.p, pe.err
}

// library returns the entry of l's library, compiled (or failed): the
// generated library itself, or the unit of the embedded library that holds
// l's kernel, which is all of it that is compiled.
func (c *pipeCache) library(l *Launch) *libEntry {
	c.mu.Lock()
	var e *libEntry
	if strings.HasPrefix(l.Library, genPrefix) {
		if e = c.libs[l.Library]; e == nil {
			e = &libEntry{name: l.Library, src: l.Source, pipes: map[string]*pipeEntry{}}
			if l.Source == "" {
				e.err = array.Errorf("metal.Run", "generated library %s has no source", l.Library)
			}
			c.libs[l.Library] = e
		}
	} else {
		key := l.Library + "\x00" + l.Kernel
		if e = c.kernels[key]; e == nil {
			unit, src, err := c.source(l.Library, l.Kernel)
			if err != nil {
				e = &libEntry{name: l.Library, err: array.Errorf("metal.Run", "library %s: %v", l.Library, err)}
			} else if e = c.libs[unit]; e == nil {
				e = &libEntry{name: unit, src: src, pipes: map[string]*pipeEntry{}}
				c.libs[unit] = e
			}
			c.kernels[key] = e
		}
	}
	c.mu.Unlock()
	e.once.Do(func() {
		if e.err != nil {
			return
		}
		lib, err := c.drv.compile(e.src)
		e.src = "" // compiled (or failed): the source is not needed again
		if err != nil {
			e.err = array.Errorf("metal.Run", "compiling library %s: %v", e.name, err)
			return
		}
		e.lib = lib
	})
	return e
}
