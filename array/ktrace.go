package array

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/fathom-go/fathom/internal/ktrace"
)

// EnvTrace is the environment variable that starts a kernel trace when
// the program starts: FATHOM_TRACE=path writes the trace to that file
// (see StartTrace). Call StopTrace before the program ends, for example
// with defer array.StopTrace() in main, to write the last events and
// close the file.
const EnvTrace = "FATHOM_TRACE"

func init() {
	path := os.Getenv(EnvTrace)
	if path == "" {
		return
	}
	// An init function can return no error, and a trace the user asked for
	// must not vanish silently; the program itself is not affected.
	if err := startTraceFile(path); err != nil {
		fmt.Fprintf(os.Stderr, "fathom: %s=%s: %v\n", EnvTrace, path, err)
	}
}

func startTraceFile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := ktrace.Start(f, f); err != nil {
		f.Close()
		return err
	}
	return nil
}

// StartTrace starts recording every kernel that Eval runs, on every
// device, and writes them to w as Chrome trace events (the JSON array
// form of the Trace Event Format), which Perfetto (ui.perfetto.dev) and
// chrome://tracing open. Each kernel is one complete event named after
// its primitive ("Add", "MatMul"), with its start and duration, on a row
// of its device and stream, and with the shapes and dtypes of its inputs
// and outputs, the stream and the bytes it reads and writes as args (an
// input counts its elements or its memory, whichever is smaller; an
// output that is a view of an input counts nothing, nor does that input).
// On the GPU the event is the time the host spent encoding the kernel;
// the Metal backend adds each command buffer's run on the GPU on a row of
// its own.
//
// Events are buffered and written to w from the goroutines that run
// kernels (and from a timer, at most a second after an event), never
// concurrently, until StopTrace returns. A trace that is never stopped
// lacks its closing bracket, which the viewers accept, and at most its
// last second of events. It returns an error if a trace is already
// running or w fails at once.
//
// Tracing off costs one atomic load per kernel.
func StartTrace(w io.Writer) error {
	if w == nil {
		return Errorf("array.StartTrace", "nil writer")
	}
	if err := ktrace.Start(w, nil); err != nil {
		return Errorf("array.StartTrace", "%v", err)
	}
	return nil
}

// StopTrace stops the running trace: it writes the buffered events and
// the closing bracket, closes the file if the trace was started with
// FATHOM_TRACE, and returns the first error met while writing. Kernels
// still running when it is called are not recorded. Without a running
// trace it does nothing, so defer array.StopTrace() is always safe.
func StopTrace() error {
	if err := ktrace.Stop(); err != nil {
		return Errorf("array.StopTrace", "writing the kernel trace: %v", err)
	}
	return nil
}

// traceKernel runs n's primitive and records it in t. A kernel that
// panics is recorded too (runPrimitive recovers the panic).
func traceKernel(t *ktrace.Session, n *node, s Stream) (err error) {
	// What the inputs hold is read before the kernel runs: a compiled
	// replay may hand an input's buffer back to the pool as soon as its
	// last consumer has run, even on another goroutine.
	ins := make([]traceInput, len(n.inputs))
	for i, a := range n.inputs {
		ins[i] = traceInput{storage: storageOf(a), bytes: readBytes(a)}
	}
	start := t.Now()
	failure := "the kernel panicked" // unless Eval returns
	defer func() { recordKernel(t, n, s, ins, start, t.Now(), failure) }()
	err = n.prim.Eval(s, n.inputs, n.outputs)
	failure = ""
	if err != nil {
		failure = err.Error()
	}
	return err
}

// traceInput is what a traced kernel's input held when the kernel
// started.
type traceInput struct {
	storage *Storage
	bytes   int64
}

func recordKernel(t *ktrace.Session, n *node, s Stream, ins []traceInput, start, end int64, failure string) {
	outs := make([]*Storage, len(n.outputs))
	for i, o := range n.outputs {
		outs[i] = storageOf(o)
	}
	var bytes int64
	var in, out strings.Builder
	for i, a := range n.inputs {
		if i > 0 {
			in.WriteString(", ")
		}
		writeShape(&in, a)
		if !sharesStorage(ins[i].storage, outs) {
			bytes += ins[i].bytes
		}
	}
	for i, a := range n.outputs {
		if i > 0 {
			out.WriteString(", ")
		}
		writeShape(&out, a)
		viewed := false
		for _, x := range ins {
			viewed = viewed || (outs[i] != nil && x.storage == outs[i])
		}
		if !viewed {
			bytes += int64(a.size * a.dtype.Size())
		}
	}
	dev := s.Device.String()
	thread := "stream " + strconv.Itoa(s.Index)
	if s.Device.Type != DeviceCPU {
		thread += " (host encode)"
	}
	args := []ktrace.Arg{
		ktrace.String("inputs", in.String()),
		ktrace.String("outputs", out.String()),
		ktrace.String("dtype", n.outputs[0].dtype.String()),
		ktrace.String("stream", s.String()),
		ktrace.Int("bytes", bytes),
	}
	if failure != "" {
		args = append(args, ktrace.String("error", failure))
	}
	t.Record(ktrace.Event{Process: dev, Thread: thread, Name: n.prim.Name(), Cat: dev, Start: start, End: end, Args: args})
}

// sharesStorage reports whether st is one of outs: an output that views
// an input (reshape, transpose, broadcast) moves no bytes.
func sharesStorage(st *Storage, outs []*Storage) bool {
	for _, o := range outs {
		if st != nil && o == st {
			return true
		}
	}
	return false
}

// writeShape writes "[2 3] float32".
func writeShape(b *strings.Builder, a *Array) {
	b.WriteByte('[')
	for i, d := range a.shape {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.Itoa(d))
	}
	b.WriteString("] ")
	b.WriteString(a.dtype.String())
}

// readBytes is what a kernel reads of an input: its elements, or its
// memory if that is smaller (a broadcast view reads the same elements
// many times).
func readBytes(a *Array) int64 {
	n := int64(a.size * a.dtype.Size())
	if st := storageOf(a); st != nil && len(st.bytes) > 0 {
		n = min(n, int64(len(st.bytes)))
	}
	return n
}
