package metal

import (
	"strings"
	"sync"
	"unsafe"

	"github.com/fathom-go/fathom/array"
)

// pipeline is a compiled compute pipeline and the largest threadgroup it
// can run (which depends on the kernel's register use).
type pipeline struct {
	id         unsafe.Pointer // retained id<MTLComputePipelineState>
	maxThreads int
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
	// source returns an embedded library's MSL by its name ("unary.metal").
	source func(library string) (string, error)

	mu   sync.Mutex
	libs map[string]*libEntry
}

type libEntry struct {
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

func newPipeCache(drv driver, source func(string) (string, error)) *pipeCache {
	return &pipeCache{drv: drv, source: source, libs: map[string]*libEntry{}}
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
			pe.err = array.Errorf("metal.Run", "kernel %s in library %s: %v", l.Kernel, l.Library, err)
			return
		}
		pe.p = p
	})
	return pe.p, pe.err
}

// library returns the entry of l's library, compiled (or failed).
func (c *pipeCache) library(l *Launch) *libEntry {
	c.mu.Lock()
	e := c.libs[l.Library]
	if e == nil {
		e = &libEntry{pipes: map[string]*pipeEntry{}}
		c.libs[l.Library] = e
	}
	c.mu.Unlock()
	e.once.Do(func() {
		var src string
		if strings.HasPrefix(l.Library, genPrefix) {
			if l.Source == "" {
				e.err = array.Errorf("metal.Run", "generated library %s has no source", l.Library)
				return
			}
			src = l.Source
		} else {
			var err error
			if src, err = c.source(l.Library); err != nil {
				e.err = array.Errorf("metal.Run", "library %s: %v", l.Library, err)
				return
			}
		}
		lib, err := c.drv.compile(src)
		if err != nil {
			e.err = array.Errorf("metal.Run", "compiling library %s: %v", l.Library, err)
			return
		}
		e.lib = lib
	})
	return e
}
