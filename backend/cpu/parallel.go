package cpu

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/fathom-go/fathom/array"
)

// grain is the number of elements below which an elementwise kernel runs
// on the calling goroutine: splitting smaller jobs costs more in goroutine
// wake-ups than it saves. BenchmarkGrain measures the crossover (serial
// against split float32 Add from 8K to 256K elements), and grain is set
// where it lay on the project's machines (docs/performance.md).
var grain = 1 << 16

// ParallelFor runs body over [0, n) in chunks of at least grain items. The
// chunks are taken from a shared counter rather than split in fixed parts,
// so a core that is busy elsewhere (the second core of these machines
// sometimes is for minutes) simply takes fewer chunks.
func ParallelFor(n, grain int, body func(lo, hi int)) {
	if n <= 0 {
		return
	}
	workers := runtime.GOMAXPROCS(0)
	if grain < 1 {
		grain = 1
	}
	if workers == 1 || n < 2*grain {
		body(0, n)
		return
	}
	// About sixteen chunks a worker: a core that loses time late in the
	// loop (the second core of these machines is sometimes busy) leaves
	// the other at most a sixteenth of its share to finish, and a handoff
	// is one atomic add (measured against four a worker with
	// BenchmarkGELU: docs/performance.md).
	chunk := max(grain, n/(workers*16))
	nchunks := (n + chunk - 1) / chunk
	workers = min(workers, nchunks)
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Pointer[workerPanic]
	work := func() {
		// A panic on a worker goroutine cannot be recovered by the caller
		// and would end the process: stop handing out chunks and pass the
		// panic to the calling goroutine, where Eval turns it into an
		// error.
		defer func() {
			if r := recover(); r != nil {
				failed.CompareAndSwap(nil, &workerPanic{value: r, stack: debug.Stack()})
				next.Store(int64(nchunks))
			}
		}()
		for {
			c := int(next.Add(1) - 1)
			if c >= nchunks {
				return
			}
			lo := c * chunk
			body(lo, min(lo+chunk, n))
		}
	}
	wg.Add(workers - 1)
	for i := 1; i < workers; i++ {
		go func() {
			defer wg.Done()
			work()
		}()
	}
	work()
	wg.Wait()
	if p := failed.Load(); p != nil {
		if e, ok := p.value.(*array.Error); ok {
			panic(e)
		}
		panic(p)
	}
}

// workerPanic is a panic caught on a ParallelFor goroutine, re-raised on
// the caller's with the stack of where it happened.
type workerPanic struct {
	value any
	stack []byte
}

func (p *workerPanic) String() string { return fmt.Sprint(p.value) }

// PanicStack is the stack of the goroutine that panicked; array.Eval puts
// it in the error it returns.
func (p *workerPanic) PanicStack() []byte { return p.stack }
