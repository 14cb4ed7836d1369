package linalg

import (
	"math"
	"slices"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// Norm returns a matrix or vector norm of a, as numpy.linalg.norm does.
//
// axes names the axes the norm is taken over: one axis for a vector
// norm, two (rows, then columns) for a matrix norm. With axes nil (or
// empty), ord nil gives the 2-norm of a flattened (any number of
// dimensions), and any other ord takes a as one vector (1-D) or one
// matrix (2-D). keepDims keeps the reduced axes as axes of size 1, so the
// result broadcasts against a.
//
// ord is nil, a number (int or float64, math.Inf(±1) for ±∞) or a string:
//
//	ord    vector norm               matrix norm
//	nil    2-norm                    Frobenius norm
//	"fro"  -                         Frobenius norm: √Σ|aᵢⱼ|²
//	"nuc"  -                         nuclear norm: the sum of the singular values
//	+∞     max |aᵢ|                  max over rows of Σⱼ|aᵢⱼ|
//	-∞     min |aᵢ|                  min over rows of Σⱼ|aᵢⱼ|
//	0      the number of aᵢ ≠ 0      -
//	1      Σ|aᵢ|                     max over columns of Σᵢ|aᵢⱼ|
//	-1     (Σ|aᵢ|⁻¹)⁻¹               min over columns of Σᵢ|aᵢⱼ|
//	2      √Σ|aᵢ|²                   the largest singular value
//	-2     (Σ|aᵢ|⁻²)^(-1/2)          the smallest singular value
//	p      (Σ|aᵢ|ᵖ)^(1/p)            -
//
// The result has a's dtype, or its real counterpart for complex64 (the
// modulus); integer and bool arrays are taken as float32, fathom's default
// float (numpy uses float64). The singular-value orders ("nuc", ±2 on
// matrices) run on the CPU stream, float16 and bfloat16 in float32, and
// take no complex64. Derivatives
// follow by composition: the 2-norm of a zero vector has a NaN gradient,
// as in JAX. A bad ord, axis or rank panics with *array.Error.
func Norm(a *array.Array, ord any, axes []int, keepDims bool) *array.Array {
	const op = "linalg.Norm"
	if a == nil {
		array.Panicf(op, "nil array")
	}
	x := normInput(a)
	nd := x.Ndim()
	o := parseOrd(op, ord)
	if len(axes) == 0 {
		if o.kind == ordNone {
			r := ops.Sqrt(ops.Sum(absSquare(x)))
			if keepDims {
				return ops.Reshape(r, slices.Repeat([]int{1}, nd)...)
			}
			return r
		}
		if nd != 1 && nd != 2 {
			array.Panicf(op, "ord %v of an array of shape %v without axes: the array must be a vector or a matrix", ord, a.Shape())
		}
		axes = []int{0, 1}[:nd]
	}
	ax := make([]int, len(axes))
	for i, v := range axes {
		if v < -nd || v >= nd {
			array.Panicf(op, "axis %d out of range for shape %v", v, a.Shape())
		}
		ax[i] = (v + nd) % max(nd, 1)
	}
	var r *array.Array
	switch len(ax) {
	case 1:
		r = vectorNorm(op, x, o, ax[0])
	case 2:
		if ax[0] == ax[1] {
			array.Panicf(op, "axes %v of shape %v name one axis twice", axes, a.Shape())
		}
		r = matrixNorm(op, x, o, ax[0], ax[1])
	default:
		array.Panicf(op, "%d axes %v of shape %v: a norm is over one axis (a vector) or two (a matrix)", len(axes), axes, a.Shape())
	}
	if keepDims {
		s := slices.Clone(ax)
		slices.Sort(s)
		r = ops.ExpandDims(r, s...)
	}
	return r
}

// normInput returns a in a dtype the norms compute in.
func normInput(a *array.Array) *array.Array {
	switch a.DType() {
	case array.Float16, array.BFloat16, array.Float32, array.Float64, array.Complex64:
		return a
	}
	return ops.AsType(a, array.Float32)
}

type ordKind int

const (
	ordNone ordKind = iota
	ordFro
	ordNuc
	ordNum
)

// normOrd is a parsed ord: a kind, and for ordNum its value.
type normOrd struct {
	kind ordKind
	p    float64
}

func parseOrd(op string, ord any) normOrd {
	switch v := ord.(type) {
	case nil:
		return normOrd{kind: ordNone}
	case string:
		switch v {
		case "fro", "f":
			return normOrd{kind: ordFro}
		case "nuc":
			return normOrd{kind: ordNuc}
		}
		array.Panicf(op, "ord %q: the string orders are \"fro\" and \"nuc\"", v)
	case int:
		return normOrd{kind: ordNum, p: float64(v)}
	case float64:
		if math.IsNaN(v) {
			array.Panicf(op, "ord NaN")
		}
		return normOrd{kind: ordNum, p: v}
	}
	array.Panicf(op, "ord of type %T: want nil, an int, a float64, \"fro\" or \"nuc\"", ord)
	return normOrd{}
}

// absSquare returns |x|² in x's real dtype; for real x it is x², whose
// derivative is smooth at 0 where |x|'s is not.
func absSquare(x *array.Array) *array.Array {
	if x.DType() == array.Complex64 {
		return ops.Square(ops.Abs(x))
	}
	return ops.Square(x)
}

func vectorNorm(op string, x *array.Array, o normOrd, ax int) *array.Array {
	if o.kind == ordFro || o.kind == ordNuc {
		array.Panicf(op, "ord %q is a matrix norm; axis %d of shape %v is a vector", []string{ordFro: "fro", ordNuc: "nuc"}[o.kind], ax, x.Shape())
	}
	if o.kind == ordNone || o.p == 2 {
		return ops.Sqrt(ops.Sum(absSquare(x), ax))
	}
	abs := ops.Abs(x)
	switch p := o.p; {
	case math.IsInf(p, 1):
		return ops.Max(abs, ax)
	case math.IsInf(p, -1):
		return ops.Min(abs, ax)
	case p == 0:
		return ops.Sum(ops.AsType(ops.NotEqualScalar(abs, 0), abs.DType()), ax)
	case p == 1:
		return ops.Sum(abs, ax)
	default:
		return ops.PowScalar(ops.Sum(ops.PowScalar(abs, p), ax), 1/p)
	}
}

// matrixNorm takes the norm of the matrices whose rows run along axis
// row and columns along axis col.
func matrixNorm(op string, x *array.Array, o normOrd, row, col int) *array.Array {
	switch o.kind {
	case ordNone, ordFro:
		return ops.Sqrt(ops.Sum(absSquare(x), row, col))
	case ordNuc:
		return ops.Sum(singularValues(op, x, row, col), -1)
	}
	// After summing one axis away, the other's index drops by one if it
	// came after it.
	after := func(kept, gone int) int {
		if kept > gone {
			return kept - 1
		}
		return kept
	}
	switch p := o.p; {
	case p == 2:
		return ops.Max(singularValues(op, x, row, col), -1)
	case p == -2:
		return ops.Min(singularValues(op, x, row, col), -1)
	case p == 1:
		return ops.Max(ops.Sum(ops.Abs(x), row), after(col, row))
	case p == -1:
		return ops.Min(ops.Sum(ops.Abs(x), row), after(col, row))
	case math.IsInf(p, 1):
		return ops.Max(ops.Sum(ops.Abs(x), col), after(row, col))
	case math.IsInf(p, -1):
		return ops.Min(ops.Sum(ops.Abs(x), col), after(row, col))
	}
	array.Panicf(op, "ord %v is not a matrix norm: the numeric matrix orders are ±1, ±2 and ±inf", o.p)
	return nil
}

// singularValues returns the singular values of the matrices of x along
// (row, col), the other axes kept in order in front.
func singularValues(op string, x *array.Array, row, col int) *array.Array {
	perm := make([]int, 0, x.Ndim())
	for d := range x.Ndim() {
		if d != row && d != col {
			perm = append(perm, d)
		}
	}
	perm = append(perm, row, col)
	t := ops.Transpose(x, perm...)
	switch x.DType() {
	case array.Float32, array.Float64:
		return ops.LinalgSVDVals(t)
	case array.Float16, array.BFloat16:
		return ops.AsType(ops.LinalgSVDVals(ops.AsType(t, array.Float32)), x.DType())
	}
	array.Panicf(op, "singular-value norms of dtype %v: want a real float dtype", x.DType())
	return nil
}
