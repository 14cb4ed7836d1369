package ops

import (
	"math"
	"math/bits"

	"github.com/fathom-go/fathom/array"
)

// partitionKth checks kth against a's length along axis and returns the
// normalised axis; kth itself may count from the end.
func partitionKth(op string, a *array.Array, kth, axis int) int {
	ax := checkSortable(op, a, axis)
	if n := a.Dim(ax); kth < -n || kth >= n {
		array.Panicf(op, "kth=%d out of range for axis %d of shape %v", kth, axis, a.Shape())
	}
	return ax
}

// Partition returns a rearranged along axis so that the element at
// position kth is the one a sorted line would have there, every element
// before it is no larger and every element after it no smaller (numpy's
// partition; NaNs count as the largest). Only that is promised about the
// order on each side. kth may be negative, counting from the end, and
// must index the axis. Every real dtype and bool can be partitioned;
// complex64 cannot.
//
// Partition sorts each line, which keeps the promise on every device and
// gives Sort's derivative (each element's cotangent goes back to where
// it came from; ties as Sort's).
func Partition(a *array.Array, kth, axis int) *array.Array {
	ax := partitionKth("ops.Partition", a, kth, axis)
	return Sort(a, ax)
}

// ArgPartition returns the int32 positions along axis that partition a
// as Partition does: TakeAlongAxis(a, ArgPartition(a, kth, axis), axis)
// is a partition of a around kth. Like ArgSort it is stable, so ties
// keep their order.
func ArgPartition(a *array.Array, kth, axis int) *array.Array {
	ax := partitionKth("ops.ArgPartition", a, kth, axis)
	return ArgSort(a, ax)
}

// SearchSorted returns, for each element of v, the int32 position in the
// 1-D array a, sorted ascending, where it would be inserted to keep a
// sorted (numpy's searchsorted): with side "left" the first such
// position, before the elements equal to it, with "right" the last, after
// them. NaNs sort last, as in Sort: a NaN of v goes after every number of
// a, before a's NaNs ("left") or after them ("right"). The result has v's
// shape. a and v compare in their promoted dtype; complex64 is not
// supported. If a is not sorted the positions are unspecified.
//
// It is numpy's binary search, run on all of v at once: one gather of a
// and a few elementwise ops per halving, O(m log n) for m values.
func SearchSorted(a, v *array.Array, side string) *array.Array {
	const op = "ops.SearchSorted"
	requireNonNil(op, a, v)
	if a.Ndim() != 1 {
		array.Panicf(op, "a of shape %v is not 1-D", a.Shape())
	}
	if side != "left" && side != "right" {
		array.Panicf(op, "side %q is not \"left\" or \"right\"", side)
	}
	dt := array.Promote(a.DType(), v.DType())
	if dt.IsComplex() {
		array.Panicf(op, "dtype %v has no order (a %v, v %v)", dt, a.DType(), v.DType())
	}
	n := a.Size()
	if n >= math.MaxInt32 {
		array.Panicf(op, "a of shape %v has more elements than int32 positions hold", a.Shape())
	}
	lo := Zeros(v.Shape(), array.Int32)
	if n == 0 || v.Size() == 0 {
		return lo
	}
	a, v = AsType(a, dt), AsType(v, dt)
	// before(x, y) is Sort's x < y, NaN after every number, given where
	// x and y are NaN; v's NaNs are found once, not at every step.
	var vNaN *array.Array
	if dt.IsFloat() {
		vNaN = IsNaN(v)
	}
	before := func(x, y, xNaN, yNaN *array.Array) *array.Array {
		if vNaN == nil {
			return Less(x, y)
		}
		return LogicalOr(Less(x, y), LogicalAnd(LogicalNot(xNaN), yNaN))
	}
	hi := Full(v.Shape(), float64(n), array.Int32)
	// Each step at least halves every interval [lo, hi): bits.Len(n)
	// steps empty them all.
	for range bits.Len(uint(n)) {
		open := Less(lo, hi)
		mid := Add(lo, FloorDivideScalar(Sub(hi, lo), 2))
		at := Take(a, MinimumScalar(mid, float64(n-1)), 0)
		var atNaN *array.Array
		if vNaN != nil {
			atNaN = IsNaN(at)
		}
		right := before(at, v, atNaN, vNaN)
		if side == "right" {
			right = LogicalNot(before(v, at, vNaN, atNaN))
		}
		lo = Where(LogicalAnd(open, right), AddScalar(mid, 1), lo)
		hi = Where(LogicalAnd(open, LogicalNot(right)), mid, hi)
	}
	return lo
}

// CountNonzero returns the number of nonzero elements of a over axes
// (none: all) as int32 (numpy's count_nonzero, whose counts are int64).
// NaN counts as nonzero, -0 as zero; a complex number is nonzero when
// either part is. KeepDims(CountNonzero, a, axes...) keeps the reduced
// axes.
func CountNonzero(a *array.Array, axes ...int) *array.Array {
	const op = "ops.CountNonzero"
	requireNonNil(op, a)
	ax := normAxes(op, axes, a.Ndim())
	return Sum(NotEqual(a, scalarOf(0, a.DType())), ax...)
}

// Diff returns the n-th discrete difference of a along axis (numpy's
// diff): out[i] = a[i+1] - a[i], applied n times, so the axis shrinks by
// n (to 0 if it is shorter). n = 0 returns a. Integers wrap; bools
// differ as NotEqual (numpy's rule). a must have at least one dimension
// and n must not be negative.
func Diff(a *array.Array, n, axis int) *array.Array {
	const op = "ops.Diff"
	requireNonNil(op, a)
	if a.Ndim() == 0 {
		array.Panicf(op, "a of shape %v is 0-d: Diff needs an axis", a.Shape())
	}
	ax := normAxis(op, axis, a.Ndim())
	if n < 0 {
		array.Panicf(op, "order n=%d is negative (shape %v)", n, a.Shape())
	}
	for range n {
		l := a.Dim(ax)
		if l <= 1 {
			return SliceAxis(a, ax, R(0, 0))
		}
		hi, lo := SliceAxis(a, ax, R(1, l)), SliceAxis(a, ax, R(0, l-1))
		if a.DType() == array.Bool {
			a = NotEqual(hi, lo)
		} else {
			a = Sub(hi, lo)
		}
	}
	return a
}
