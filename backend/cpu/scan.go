package cpu

import (
	"math"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/opset"
)

// Scan writes the running op of in along axis to out (same shape, which
// the caller has checked; dtype op.Result(in.DType)). Inclusive scans include each element in its
// own result (numpy's cumsum); exclusive ones start from the identity (0,
// 1, the lowest value, the highest value) and leave the element out.
// reverse runs from the end of the axis to its start. float16 and bfloat16
// accumulate in float32 and round each result; integers wrap.
// LogCumSumExp (real floats only) starts from -Inf.
func Scan(op opset.ScanOp, out, in Buf, axis int, reverse, inclusive bool) error {
	const name = "cpu.Scan"
	want, ok := op.Result(in.DType)
	if !ok {
		return array.Errorf(name, "%v of %v is not supported", op, in.DType)
	}
	if out.DType != want {
		return array.Errorf(name, "%v of %v gives %v, not %v", op, in.DType, want, out.DType)
	}
	l := newRedLines(in, out, axis, true)
	if l.count == 0 || l.n == 0 {
		return nil
	}
	switch in.DType {
	case array.Bool:
		if op == opset.CumSum || op == opset.CumProd {
			k := scanNum[int32](op)
			k.io = redIO[int32]{load: redLoadBoolInt(in), o: elems[int32](out)}
			scanRun(l, &k, reverse, inclusive)
			return nil
		}
		k := scanOrd[uint8](op)
		if op == opset.CumMin {
			k.ident = 1
		}
		scanDirect(l, &k, out, in, reverse, inclusive)
	case array.Float16, array.BFloat16:
		k := scanFloat[float32](op)
		k.io = redIO[float32]{load: redLoadHalf(in), store: redStoreHalf(out)}
		scanRun(l, &k, reverse, inclusive)
	case array.Uint8:
		k := scanOrd[uint8](op)
		scanDirect(l, &k, out, in, reverse, inclusive)
	case array.Int32:
		k := scanOrd[int32](op)
		scanDirect(l, &k, out, in, reverse, inclusive)
	case array.Int64:
		k := scanOrd[int64](op)
		scanDirect(l, &k, out, in, reverse, inclusive)
	case array.Int8:
		k := scanOrd[int8](op)
		scanDirect(l, &k, out, in, reverse, inclusive)
	case array.Int16:
		k := scanOrd[int16](op)
		scanDirect(l, &k, out, in, reverse, inclusive)
	case array.Uint16:
		k := scanOrd[uint16](op)
		scanDirect(l, &k, out, in, reverse, inclusive)
	case array.Uint32:
		k := scanOrd[uint32](op)
		scanDirect(l, &k, out, in, reverse, inclusive)
	case array.Uint64:
		k := scanOrd[uint64](op)
		scanDirect(l, &k, out, in, reverse, inclusive)
	case array.Float32:
		k := scanFloat[float32](op)
		scanDirect(l, &k, out, in, reverse, inclusive)
	case array.Float64:
		k := scanFloat[float64](op)
		scanDirect(l, &k, out, in, reverse, inclusive)
	default:
		k := scanNum[complex64](op)
		scanDirect(l, &k, out, in, reverse, inclusive)
	}
	return nil
}

// scanKernel is one scan on elements of type A. line scans a contiguous
// line; step advances the running values acc of a panel of lines by one
// row x, writing the row's results to o.
type scanKernel[A any] struct {
	ident A
	line  func(o, x []A, acc A, inclusive bool)
	step  func(acc, o, x []A, inclusive bool)
	io    redIO[A]
}

func scanDirect[A any](l *redLines, k *scanKernel[A], out, in Buf, reverse, inclusive bool) {
	k.io.x, k.io.o = elems[A](in), elems[A](out)
	scanRun(l, k, reverse, inclusive)
}

func scanRun[A any](l *redLines, k *scanKernel[A], reverse, inclusive bool) {
	if l.columnar(8) {
		cp := l.colPlan(false)
		ParallelFor(cp.cols, max(1, grain/(l.n*cp.tw)), func(lo, hi int) {
			acc, xb, ob := make([]A, cp.tw), make([]A, cp.tw), make([]A, cp.tw)
			for t := lo; t < hi; t++ {
				p := l.panel(cp, t)
				a := acc[:p.w]
				for i := range a {
					a[i] = k.ident
				}
				for s := range l.n {
					r := s
					if reverse {
						r = l.n - 1 - s
					}
					x := k.io.read(p.in+r*l.sIn, p.w, cp.kIn, xb)
					o := k.io.target(p.out+r*l.sOut, p.w, cp.kOut, ob)
					k.step(a, o, x, inclusive)
					k.io.write(p.out+r*l.sOut, cp.kOut, o)
				}
			}
		})
		return
	}
	l.each(func() func(inOff, outOff int) {
		var xb, ob []A
		return func(inOff, outOff int) {
			si, so := l.sIn, l.sOut
			if reverse {
				// Walking the line backwards turns a reverse scan into a
				// forward one over gathered data.
				inOff += (l.n - 1) * si
				outOff += (l.n - 1) * so
				si, so = -si, -so
			}
			if xb == nil && (k.io.load != nil || si != 1) {
				xb = make([]A, l.n)
			}
			if ob == nil && (k.io.store != nil || so != 1) {
				ob = make([]A, l.n)
			}
			x := k.io.read(inOff, l.n, si, xb)
			o := k.io.target(outOff, l.n, so, ob)
			k.line(o, x, k.ident, inclusive)
			k.io.write(outOff, so, o)
		}
	})
}

func scanNum[A redNumber](op opset.ScanOp) scanKernel[A] {
	if op == opset.CumProd {
		return scanKernel[A]{ident: 1, line: cumProdLine[A], step: cumProdStep[A]}
	}
	return scanKernel[A]{line: cumSumLine[A], step: cumSumStep[A]}
}

func scanOrd[A redOrdered](op opset.ScanOp) scanKernel[A] {
	switch op {
	case opset.CumMax:
		return scanKernel[A]{ident: redLowest[A](), line: cumMaxLine[A], step: cumMaxStep[A]}
	case opset.CumMin:
		return scanKernel[A]{ident: redHighest[A](), line: cumMinLine[A], step: cumMinStep[A]}
	}
	return scanNum[A](op)
}

func cumSumLine[A redNumber](o, x []A, acc A, inclusive bool) {
	o = o[:len(x)]
	if inclusive {
		for i, v := range x {
			acc += v
			o[i] = acc
		}
		return
	}
	for i, v := range x {
		o[i] = acc
		acc += v
	}
}

func cumProdLine[A redNumber](o, x []A, acc A, inclusive bool) {
	o = o[:len(x)]
	if inclusive {
		for i, v := range x {
			acc *= v
			o[i] = acc
		}
		return
	}
	for i, v := range x {
		o[i] = acc
		acc *= v
	}
}

func cumMaxLine[A redOrdered](o, x []A, acc A, inclusive bool) {
	o = o[:len(x)]
	for i, v := range x {
		if !inclusive {
			o[i] = acc
		}
		if v > acc || v != v {
			acc = v
		}
		if inclusive {
			o[i] = acc
		}
	}
}

func cumMinLine[A redOrdered](o, x []A, acc A, inclusive bool) {
	o = o[:len(x)]
	for i, v := range x {
		if !inclusive {
			o[i] = acc
		}
		if v < acc || v != v {
			acc = v
		}
		if inclusive {
			o[i] = acc
		}
	}
}

func cumSumStep[A redNumber](acc, o, x []A, inclusive bool) {
	x, o = x[:len(acc)], o[:len(acc)]
	if inclusive {
		for i, v := range x {
			acc[i] += v
			o[i] = acc[i]
		}
		return
	}
	for i, v := range x {
		o[i] = acc[i]
		acc[i] += v
	}
}

func cumProdStep[A redNumber](acc, o, x []A, inclusive bool) {
	x, o = x[:len(acc)], o[:len(acc)]
	if inclusive {
		for i, v := range x {
			acc[i] *= v
			o[i] = acc[i]
		}
		return
	}
	for i, v := range x {
		o[i] = acc[i]
		acc[i] *= v
	}
}

func cumMaxStep[A redOrdered](acc, o, x []A, inclusive bool) {
	x, o = x[:len(acc)], o[:len(acc)]
	for i, v := range x {
		if !inclusive {
			o[i] = acc[i]
		}
		if v > acc[i] || v != v {
			acc[i] = v
		}
		if inclusive {
			o[i] = acc[i]
		}
	}
}

func cumMinStep[A redOrdered](acc, o, x []A, inclusive bool) {
	x, o = x[:len(acc)], o[:len(acc)]
	for i, v := range x {
		if !inclusive {
			o[i] = acc[i]
		}
		if v < acc[i] || v != v {
			acc[i] = v
		}
		if inclusive {
			o[i] = acc[i]
		}
	}
}

// scanFloat is the kernel of op over a float line: LogCumSumExp's or the
// ordered ops'.
func scanFloat[A float32 | float64](op opset.ScanOp) scanKernel[A] {
	if op == opset.LogCumSumExp {
		return scanLogSumExp[A]()
	}
	return scanOrd[A](op)
}

// scanLogSumExp folds with numpy's logaddexp (binary.go), in float64 so
// that float32 rounds once per result.
func scanLogSumExp[A float32 | float64]() scanKernel[A] {
	ninf := A(math.Inf(-1))
	return scanKernel[A]{
		ident: ninf,
		line: func(o, x []A, acc A, inclusive bool) {
			o = o[:len(x)]
			for i, v := range x {
				if !inclusive {
					o[i] = acc
				}
				acc = A(logAddExp(float64(acc), float64(v)))
				if inclusive {
					o[i] = acc
				}
			}
		},
		step: func(acc, o, x []A, inclusive bool) {
			x, o = x[:len(acc)], o[:len(acc)]
			for i, v := range x {
				if !inclusive {
					o[i] = acc[i]
				}
				acc[i] = A(logAddExp(float64(acc[i]), float64(v)))
				if inclusive {
					o[i] = acc[i]
				}
			}
		},
	}
}
