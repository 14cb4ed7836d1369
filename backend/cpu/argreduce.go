package cpu

import (
	"strconv"

	"github.com/fathom-go/fathom/array"
)

// ArgOp selects what ArgReduce looks for.
type ArgOp uint8

// ArgMax finds the largest element, ArgMin the smallest.
const (
	ArgMax ArgOp = iota
	ArgMin
)

// String returns "argmax" or "argmin".
func (op ArgOp) String() string {
	switch op {
	case ArgMax:
		return "argmax"
	case ArgMin:
		return "argmin"
	}
	return "ArgOp(" + strconv.Itoa(int(op)) + ")"
}

// ArgReduce writes to out (int32, in's shape without axis) the index along
// axis of each line's largest (ArgMax) or smallest (ArgMin) element. Ties
// go to the first; a NaN beats every number, so the first NaN's index is
// the answer (numpy). The axis must not be empty unless out is. Complex
// inputs are not supported.
func ArgReduce(op ArgOp, out, in Buf, axis int) error {
	const name = "cpu.ArgReduce"
	if op > ArgMin {
		return array.Errorf(name, "invalid op %v", op)
	}
	if in.DType == array.Complex64 || !in.DType.Valid() {
		return array.Errorf(name, "%v of %v is not supported", op, in.DType)
	}
	if out.DType != array.Int32 {
		return array.Errorf(name, "output dtype %v, want int32", out.DType)
	}
	if err := checkAxisBufs(name, out, in, axis, true); err != nil {
		return err
	}
	l := newRedLines(in, out, axis, false)
	if l.count == 0 {
		return nil
	}
	if l.n == 0 {
		return array.Errorf(name, "%v over an empty axis %d of shape %v", op, axis, in.Shape)
	}
	o := Elems[int32](out)
	isMax := op == ArgMax
	switch in.DType {
	case array.Bool, array.Uint8:
		argRun(l, redIO[uint8]{x: Elems[uint8](in)}, o, isMax)
	case array.Int32:
		argRun(l, redIO[int32]{x: Elems[int32](in)}, o, isMax)
	case array.Int64:
		argRun(l, redIO[int64]{x: Elems[int64](in)}, o, isMax)
	case array.Float16, array.BFloat16:
		argRun(l, redIO[float32]{load: redLoadHalf(in)}, o, isMax)
	case array.Float32:
		argRun(l, redIO[float32]{x: Elems[float32](in)}, o, isMax)
	default:
		argRun(l, redIO[float64]{x: Elems[float64](in)}, o, isMax)
	}
	return nil
}

func argRun[A redOrdered](l *redLines, io redIO[A], o []int32, isMax bool) {
	if l.columnar(8) {
		l.panels(redTile, func() func(inOff, outOff, w, kIn, kOut int) {
			best, idx, buf := make([]A, redTile), make([]int32, redTile), make([]A, redTile)
			return func(inOff, outOff, w, kIn, kOut int) {
				b, ix := best[:w], idx[:w]
				copy(b, io.read(inOff, w, kIn, buf))
				clear(ix)
				for t := 1; t < l.n; t++ {
					row := io.read(inOff+t*l.sIn, w, kIn, buf)
					if isMax {
						argMaxRow(b, ix, row, int32(t))
					} else {
						argMinRow(b, ix, row, int32(t))
					}
				}
				for i, v := range ix {
					o[outOff+i*kOut] = v
				}
			}
		})
		return
	}
	l.each(func() func(inOff, outOff int) {
		var buf []A
		if io.load != nil || l.sIn != 1 {
			buf = make([]A, l.n)
		}
		return func(inOff, outOff int) {
			x := io.read(inOff, l.n, l.sIn, buf)
			if isMax {
				o[outOff] = argMaxLine(x)
			} else {
				o[outOff] = argMinLine(x)
			}
		}
	})
}

func argMaxLine[A redOrdered](x []A) int32 {
	best, bi := x[0], 0
	if best != best {
		return 0
	}
	for i, v := range x {
		if v > best {
			best, bi = v, i
		} else if v != v {
			return int32(i)
		}
	}
	return int32(bi)
}

func argMinLine[A redOrdered](x []A) int32 {
	best, bi := x[0], 0
	if best != best {
		return 0
	}
	for i, v := range x {
		if v < best {
			best, bi = v, i
		} else if v != v {
			return int32(i)
		}
	}
	return int32(bi)
}

// argMaxRow updates a panel's best values and their indices with row t. A
// NaN replaces a number but not an earlier NaN.
func argMaxRow[A redOrdered](best []A, idx []int32, row []A, t int32) {
	row = row[:len(best)]
	idx = idx[:len(best)]
	for i, v := range row {
		if b := best[i]; v > b || (v != v && b == b) {
			best[i], idx[i] = v, t
		}
	}
}

func argMinRow[A redOrdered](best []A, idx []int32, row []A, t int32) {
	row = row[:len(best)]
	idx = idx[:len(best)]
	for i, v := range row {
		if b := best[i]; v < b || (v != v && b == b) {
			best[i], idx[i] = v, t
		}
	}
}
