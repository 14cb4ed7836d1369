package compile

import "github.com/fathom-go/fathom/array"

// CallDonating is Call for a caller that gives up some of its inputs, as
// JAX's donate_argnums: the inputs listed in donate (by position) must not
// be used again, nor any view of them, once CallDonating returns. Their
// buffers then go back to the pool as soon as the step has read them (on
// the GPU, once the GPU has run what reads them) rather than at the next
// collection, so a training loop that feeds each step's parameters to the
// next (params = step.CallDonating(all, params...)) finds the memory for
// the new ones in the pool: no fresh memory and no collection after its
// first step. An input that is also an output,
// shares its buffer with another input or a captured array, is not yet
// evaluated, or is on another device than the call's stream is not
// donated. Reading a donated array afterwards is an error from Eval (a
// kernel finds no memory), never a value.
func (f *Func) CallDonating(donate []int, in ...*array.Array) []*array.Array {
	return defaultWorker.CallDonating(f, donate, in...)
}

// CallDonating is Worker.Call with Func.CallDonating's donation.
func (w *Worker) CallDonating(f *Func, donate []int, in ...*array.Array) []*array.Array {
	donated := make([]bool, len(in))
	for _, i := range donate {
		if i < 0 || i >= len(in) {
			array.Panicf("compile.CallDonating", "donated input %d out of range for %d inputs", i, len(in))
		}
		donated[i] = true
	}
	if w == nil || f == nil || w.closed.Load() || f.released.Load() || disabled() {
		return w.Call(f, in...)
	}
	for _, x := range in {
		if x == nil || x.Tracer() {
			return w.Call(f, in...)
		}
	}
	s := w.Stream()
	return w.traceFor(f, in, s).replayDonating(in, s, donated)
}
