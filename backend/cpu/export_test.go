package cpu

import "github.com/fathom-go/fathom/internal/fused"

// Hooks for the tests of package cpu_test, which run the fused programs
// of package compile.

// TileElems is the interpreter's tile.
const TileElems = tileElems

// HasChainKernel reports whether this machine has the chain kernel.
func HasChainKernel() bool { return newChain() != nil }

// SetStreamBytes sets the result size from which RunFused streams its
// outputs; it returns a function that restores it.
func SetStreamBytes(n int) (restore func()) {
	old := streamBytes
	streamBytes = n
	return func() { streamBytes = old }
}

// RunsAsChain reports whether p runs as a chain for a call whose
// one-element inputs are those with sc[i] set.
func RunsAsChain(p *fused.Program, sc [][]byte) bool {
	ch, _ := newInterp(p).chainOf(sc)
	return ch != nil
}

// ProductsFused counts p's instructions that do a product's work.
func ProductsFused(p *fused.Program) int {
	n := 0
	for _, st := range newInterp(p).steps {
		if st.fused != nil {
			n++
		}
	}
	return n
}
