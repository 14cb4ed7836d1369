package array

import "sync"

// maxAsyncPending is how many AsyncEval calls may wait for the worker
// before the next one blocks: enough for a loop to run a step or two
// ahead, not so many that a loop that never reads queues without end
// (MLX bounds its active tasks the same way).
const maxAsyncPending = 8

// asyncQueue is the work of AsyncEval: one worker goroutine, started when
// work arrives and gone when the queue is empty, evaluates the calls in
// order. One worker rather than a goroutine per call keeps the calls in
// the order they were made, as on a stream, and leaves the cores to the
// kernels, which split their own work.
var asyncQueue struct {
	mu      sync.Mutex
	space   sync.Cond // signalled when a call leaves the queue
	jobs    [][]*Array
	pending int // calls queued or running
	running bool
}

func init() { asyncQueue.space.L = &asyncQueue.mu }

// AsyncEval starts evaluating xs and returns without waiting for them, so
// the caller can build the next computation (or load the next batch)
// while this one runs, as MLX's async_eval. Reading a value (Eval,
// ToSlice, Item, String) waits until it is computed: a reader that finds
// a kernel running waits for it, and runs pending kernels itself rather
// than wait for the worker to reach them, so no kernel runs twice. An
// error of the evaluation is returned by every read of an array that
// depends on the failed kernel, the first and every later one.
//
// Calls are evaluated one after another, in the order they were made, on
// one background goroutine that exits when there is nothing left to do.
// If several calls are already waiting, AsyncEval blocks until the oldest
// finishes, so a loop that never reads its results does not run
// unboundedly ahead. Arrays dropped unread are collected once their
// evaluation finishes. A nil array panics with *Error.
//
// It pays off where the host has work of its own while kernels run:
// building the next step's graph, preparing data, or a GPU whose kernels
// run beside the host. On the CPU the kernels and the host share the
// cores, so the gain is at most the host's share of a step.
func AsyncEval(xs ...*Array) {
	ready := true
	for i, x := range xs {
		if x == nil {
			Panicf("array.AsyncEval", "nil array at position %d of %d", i, len(xs))
		}
		ready = ready && x.isReady()
	}
	if ready {
		return
	}
	job := append([]*Array(nil), xs...)
	q := &asyncQueue
	q.mu.Lock()
	for q.pending >= maxAsyncPending {
		q.space.Wait()
	}
	q.pending++
	q.jobs = append(q.jobs, job)
	if !q.running {
		q.running = true
		go asyncWorker()
	}
	q.mu.Unlock()
}

// asyncWorker evaluates the queued calls until none is left.
func asyncWorker() {
	q := &asyncQueue
	for {
		q.mu.Lock()
		jobs := q.jobs
		q.jobs = nil
		if len(jobs) == 0 {
			q.running = false
			q.mu.Unlock()
			return
		}
		q.mu.Unlock()
		for i, job := range jobs {
			asyncRun(job)
			jobs[i] = nil
			q.mu.Lock()
			q.pending--
			q.space.Signal()
			q.mu.Unlock()
		}
	}
}

// asyncRun evaluates one call. Its error needs no keeping: Eval leaves it
// on the nodes that failed, where every read finds it again. A panic
// outside the kernels (which Eval already turns into errors) is a bug
// that the reader's own Eval meets again; it must not end the process
// from a goroutine the caller cannot recover in.
func asyncRun(xs []*Array) {
	defer func() { _ = recover() }()
	_ = Eval(xs...)
}
