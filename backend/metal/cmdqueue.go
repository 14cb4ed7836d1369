package metal

import (
	"cmp"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/ktrace"
)

// driver is the part of Metal the host uses. On darwin the Objective-C
// shim and darwinkit implement it; the tests use a fake that records what
// was encoded, so the queue's logic (batching, barriers, lifetimes,
// errors) is tested on every platform.
type driver interface {
	// compile builds a library from MSL source.
	compile(source string) (lib unsafe.Pointer, err error)
	// pipeline builds the compute pipeline of a kernel in a library.
	pipeline(lib unsafe.Pointer, kernel string) (pipeline, error)
	// newCommandBuffer starts a command buffer with an open compute
	// encoder whose dispatches may run concurrently.
	newCommandBuffer() (cmdBuf, error)
	// encode records one dispatch: barrier first if asked, then pipeline,
	// buffers, parameters and grid.
	encode(cb cmdBuf, d *dispatch)
	// commit ends encoding and submits the command buffer. It cannot
	// fail: a failure shows when the buffer is waited for or polled.
	commit(cb cmdBuf)
	// wait blocks until the command buffer has run; poll only asks.
	wait(cb cmdBuf) error
	poll(cb cmdBuf) (done bool, err error)
	// release drops the host's reference to a finished command buffer.
	release(cb cmdBuf)
}

// gpuClock is what a driver adds that can time its command buffers on the
// GPU (Metal's GPUStartTime and GPUEndTime): a finished buffer's start
// and end of execution and the host's clock now, in nanoseconds of that
// one clock; ok is false if the buffer has no times. The kernel trace
// draws them on a GPU row.
type gpuClock interface {
	gpuTimes(cb cmdBuf) (start, end, now int64, ok bool)
}

// cmdBuf is a command buffer and its compute encoder.
type cmdBuf struct {
	cb, enc unsafe.Pointer
}

// dispatch is one encoded kernel launch in the driver's terms.
type dispatch struct {
	pipeline unsafe.Pointer
	buffers  []unsafe.Pointer // ids of the MTLBuffers at index 0, 1, ...
	offsets  []uint64
	writes   []bool // whether the kernel writes the buffer at each index
	params   []byte // bound with setBytes at index len(buffers), if any
	grid     [3]int
	group    [3]int
	barrier  bool
}

// maxSetBytes is Metal's limit for setBytes; larger parameter blocks go
// through a buffer.
const maxSetBytes = 4096

// maxBufferArgs is the number of buffer argument slots of a compute
// kernel.
const maxBufferArgs = 31

// cmdQueue encodes launches into command buffers: many dispatches per
// buffer, committed every commitOps dispatches or once the buffer
// references commitBytes of memory. Within a command buffer a barrier goes
// only before a dispatch that touches a buffer an earlier dispatch wrote,
// or writes one an earlier dispatch read, counting the dispatches since
// the last barrier (a barrier orders everything before it). Across command buffers Metal orders
// access itself (the buffers are hazard-tracked). The host waits for the
// GPU only in synchronize, or when memory runs out.
//
// A command buffer that fails has its error recorded on the memory it
// writes (array.Storage.Fail), and so does any command buffer in flight
// with it that reads memory marked failed, when it completes; a launch
// that reads memory already marked is refused with the failure. So every
// Eval that waited for the failed work, and every later read of what it
// produced, finds the error, whichever of several concurrent Evals
// happened to synchronize first, and work that does not depend on it
// runs on.
type cmdQueue struct {
	drv   driver
	cache *bufCache
	cfg   config

	mu       sync.Mutex
	cur      *batch
	inflight []*batch // committed, in commit order
	seq      uint64   // sequence number of the newest command buffer
	// failSeq is the newest command buffer made before a failure was
	// last recorded: up to it, one may read memory that failed without
	// its launch having been refused.
	failSeq uint64
	// staged maps host memory (bytes that are not a device buffer) to its
	// device copy until the next synchronize, so a launch that reads what
	// an earlier one wrote into host memory reads the device copy.
	staged map[stageKey]*stagedMem
	// err is the first failure since the last synchronize, and lost the
	// first that could not be recorded on the memory it spoiled (host
	// memory that is not a pooled Storage).
	err, lost error
	// scratch space for encodeLocked, reused across dispatches
	scratch dispatch
	bufs    []*devBuf
	keeps   []Memory
}

// batch is one command buffer and what it needs kept alive.
type batch struct {
	seq   uint64
	cb    cmdBuf
	ops   int
	bytes int64
	// refs holds every buffer the command buffer uses, so no Storage is
	// collected (and its buffer reused) while the GPU may still use it,
	// and what its dispatches do with it, for failures.
	refs map[*devBuf]batchRef
	// buffers written and read since the last barrier
	written, read map[*devBuf]struct{}
	// kernels names the dispatches, in order, while a kernel trace runs
	kernels []string
}

type batchRef struct {
	mem         Memory
	wrote, read bool
}

type stageKey struct {
	p *byte
	n int
}

type stagedMem struct {
	host    Memory
	dev     *array.Storage
	written bool
}

func newCmdQueue(drv driver, cache *bufCache, cfg config) *cmdQueue {
	return &cmdQueue{drv: drv, cache: cache, cfg: cfg, staged: map[stageKey]*stagedMem{}}
}

// run encodes the launches in order; pipes[i] is the pipeline of ls[i].
func (q *cmdQueue) run(ls []Launch, pipes []pipeline) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i := range ls {
		if err := q.encodeLocked(&ls[i], pipes[i]); err != nil {
			return err
		}
	}
	return nil
}

func (q *cmdQueue) encodeLocked(l *Launch, p pipeline) error {
	// Resolve (and stage) every buffer before touching the open command
	// buffer: staging may run out of memory and drain the queue.
	bufs, keeps := q.bufs[:0], q.keeps[:0]
	for _, a := range l.Buffers {
		b, keep, err := q.resolveLocked(a)
		if err != nil {
			return err
		}
		if !a.Write {
			if err := cmp.Or(memErr(a.Mem), memErr(keep)); err != nil {
				return err
			}
		}
		bufs, keeps = append(bufs, b), append(keeps, keep)
	}
	d := &q.scratch
	d.params = nil
	var params *array.Storage
	if len(l.Params) > maxSetBytes {
		st, err := q.allocLocked(len(l.Params))
		if err != nil {
			return err
		}
		copy(st.Bytes(), l.Params)
		params = st
		bufs, keeps = append(bufs, deviceBuf(st)), append(keeps, st)
	} else if len(l.Params) > 0 {
		d.params = l.Params
	}
	q.bufs, q.keeps = bufs, keeps
	defer func() { clear(q.keeps) }()

	if q.cur == nil {
		cb, err := q.drv.newCommandBuffer()
		if err != nil {
			return err
		}
		q.seq++
		q.cur = &batch{seq: q.seq, cb: cb, refs: map[*devBuf]batchRef{}, written: map[*devBuf]struct{}{}, read: map[*devBuf]struct{}{}}
	}
	b := q.cur
	d.buffers, d.offsets, d.writes = d.buffers[:0], d.offsets[:0], d.writes[:0]
	for i, x := range bufs {
		off, w := 0, false
		if i < len(l.Buffers) {
			off, w = l.Buffers[i].Offset, l.Buffers[i].Write
		}
		r, ok := b.refs[x]
		if !ok {
			b.bytes += int64(x.class)
		}
		if !ok || w && !r.wrote || !w && !r.read {
			b.refs[x] = batchRef{mem: keeps[i], wrote: r.wrote || w, read: r.read || !w}
		}
		x.lastUse.Store(b.seq)
		d.buffers = append(d.buffers, x.id)
		d.offsets = append(d.offsets, uint64(off))
		d.writes = append(d.writes, w)
	}
	// The parameter block is this launch's alone: back to the cache once
	// the command buffer has run, not at a collection.
	params.Recycle()
	d.barrier = false
	for i, a := range l.Buffers {
		_, w := b.written[bufs[i]]
		_, r := b.read[bufs[i]]
		if w || (a.Write && r) {
			d.barrier = true
			clear(b.written)
			clear(b.read)
			break
		}
	}
	for i, a := range l.Buffers {
		if a.Write {
			b.written[bufs[i]] = struct{}{}
		} else {
			b.read[bufs[i]] = struct{}{}
		}
	}
	d.pipeline, d.grid, d.group = p.id, l.Grid, l.Group
	q.drv.encode(b.cb, d)
	if ktrace.Current() != nil {
		b.kernels = append(b.kernels, l.Kernel)
	}
	b.ops++
	if b.ops >= q.cfg.commitOps || b.bytes >= q.cfg.commitBytes {
		q.commitLocked()
		q.pollLocked()
	}
	return nil
}

// resolveLocked returns the device buffer of a buffer argument, staging
// host memory into a device copy the first time it is seen.
func (q *cmdQueue) resolveLocked(a bufArg) (*devBuf, Memory, error) {
	if b := deviceBuf(a.Mem); b != nil {
		return b, a.Mem, nil
	}
	host := a.Mem.Bytes()
	k := stageKey{unsafe.SliceData(host), len(host)}
	s := q.staged[k]
	if s == nil {
		st, err := q.allocLocked(len(host))
		if err != nil {
			return nil, nil, err
		}
		copy(st.Bytes(), host)
		s = &stagedMem{host: a.Mem, dev: st}
		q.staged[k] = s
	}
	s.written = s.written || a.Write
	return deviceBuf(s.dev), s.dev, nil
}

// allocLocked allocates device memory while the queue is locked: when
// memory runs out it waits for the GPU work in flight, whose buffers may
// then be freed, and collects garbage before trying again.
func (q *cmdQueue) allocLocked(n int) (*array.Storage, error) {
	st, err := q.cache.alloc(n)
	if err == nil {
		return st, nil
	}
	q.drainLocked()
	return q.cache.allocReclaiming(n)
}

func (q *cmdQueue) commitLocked() {
	b := q.cur
	if b == nil {
		return
	}
	q.cur = nil
	b.written, b.read = nil, nil
	q.inflight = append(q.inflight, b)
	q.drv.commit(b.cb)
}

// pollLocked retires the command buffers that have finished, oldest
// first, without waiting, so their buffers can be reused.
func (q *cmdQueue) pollLocked() {
	n := 0
	for _, b := range q.inflight {
		done, err := q.drv.poll(b.cb)
		if !done {
			break
		}
		q.finishedLocked(b, err)
		n++
	}
	q.retire(n)
}

// drainLocked commits the open command buffer and waits for every one in
// flight.
func (q *cmdQueue) drainLocked() {
	q.commitLocked()
	for _, b := range q.inflight {
		q.finishedLocked(b, q.drv.wait(b.cb))
	}
	q.retire(len(q.inflight))
}

// finishedLocked does what a command buffer needs once it has run (or
// failed with err): its failure, or one it read from memory that
// failed, is recorded on the memory it writes; it is traced and
// released; and the buffers recycled while it used them go back to the
// cache. Command buffers finish in commit order.
func (q *cmdQueue) finishedLocked(b *batch, err error) {
	if err == nil && b.seq <= q.failSeq {
		for _, r := range b.refs {
			if r.read {
				if err = memErr(r.mem); err != nil {
					break
				}
			}
		}
	}
	if err != nil {
		q.err = cmp.Or(q.err, err)
		for _, r := range b.refs {
			if r.wrote {
				q.failLocked(r.mem, err)
			}
		}
		q.failSeq = q.seq
	}
	q.traceLocked(b)
	q.drv.release(b.cb)
	q.cache.retire(b.seq)
}

// failLocked records err on m, memory that failed work should have
// written, or keeps it to be reported by synchronize if m cannot hold it.
func (q *cmdQueue) failLocked(m Memory, err error) {
	if st, ok := m.(*array.Storage); !ok || !st.Fail(err) {
		q.lost = cmp.Or(q.lost, err)
	}
}

// memErr is the failure recorded on m (array.Storage.Fail), nil if none.
func memErr(m Memory) error {
	if st, ok := m.(*array.Storage); ok {
		return st.Err()
	}
	return nil
}

// traceLocked records a finished command buffer's run on the GPU in the
// kernel trace, if one is running and the driver has the GPU's times.
func (q *cmdQueue) traceLocked(b *batch) {
	t := ktrace.Current()
	if t == nil {
		return
	}
	clk, ok := q.drv.(gpuClock)
	if !ok {
		return
	}
	start, end, now, ok := clk.gpuTimes(b.cb)
	if !ok {
		return
	}
	// The GPU's times are on the host's clock; moved onto the trace's by
	// the distance between the two now.
	off := t.Now() - now
	t.Record(ktrace.Event{
		Process: "gpu", Thread: "command buffers", Name: "command buffer", Cat: "gpu",
		Start: start + off, End: end + off,
		Args: []ktrace.Arg{
			ktrace.Int("dispatches", int64(b.ops)),
			ktrace.Int("buffer_bytes", b.bytes),
			ktrace.String("kernels", kernelList(b.kernels)),
		},
	})
}

// kernelList names kernels in order, a run of one kernel once with its
// count: "unary_Exp_float32_contig x3, matmul_float32".
func kernelList(names []string) string {
	var sb strings.Builder
	for i := 0; i < len(names); {
		j := i + 1
		for j < len(names) && names[j] == names[i] {
			j++
		}
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(names[i])
		if j-i > 1 {
			sb.WriteString(" x")
			sb.WriteString(strconv.Itoa(j - i))
		}
		i = j
	}
	return sb.String()
}

func (q *cmdQueue) retire(n int) {
	m := copy(q.inflight, q.inflight[n:])
	clear(q.inflight[m:])
	q.inflight = q.inflight[:m]
}

// synchronize waits until all encoded work has run and copies what the
// GPU wrote into staged host memory back. Failures are recorded on the
// memory they spoiled (finishedLocked), where every reader finds them; it
// returns the first since the last synchronize (for an executor's caller,
// the conformance suite, which reads memory directly), and the first
// that could not be recorded on memory, which no reader would find.
func (q *cmdQueue) synchronize() (first, lost error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.drainLocked()
	// The device copies are the queue's alone and the GPU is done with
	// them: back to the cache now, not at a collection.
	for _, s := range q.staged {
		if err := s.dev.Err(); err != nil && s.written {
			q.failLocked(s.host, err)
		} else if s.written {
			copy(s.host.Bytes(), s.dev.Bytes())
		}
		s.dev.Recycle()
	}
	clear(q.staged)
	first, lost = q.err, q.lost
	q.err, q.lost = nil, nil
	return first, lost
}
