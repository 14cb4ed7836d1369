package ops

import "github.com/fathom-go/fathom/internal/opset"

// The methods below let package compile see inside the primitives it
// fuses row-wise (a reduction with the elementwise work before and after
// it) without the primitive types being exported.

// Reduction returns the fold and the axes (sorted, distinct,
// non-negative) of a reduction's primitive.
func (p *reducePrim) Reduction() (opset.ReduceOp, []int) { return p.Op, p.Axes }

// Counted returns the axes a count primitive (the divisor of Mean and
// Var, NumberOfElements) counts over and the degrees of freedom it
// subtracts.
func (p *countPrim) Counted() (axes []int, ddof int) { return p.Axes, p.DDOF }

// Inserted returns the size-1 axes ExpandDims inserts, as positions of
// its result.
func (p *expandDimsPrim) Inserted() []int { return p.Axes }
