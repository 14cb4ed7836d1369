package metal

import (
	"github.com/fathom-go/fathom/array"
)

// Softmax plans exp(x - max) / sum(exp(x - max)) along axis of in into
// out (same shape and dtype: float32, float16 or bfloat16), with the edge
// cases of cpu.Softmax (scipy's formulas). Each line is handled by a
// simdgroup (short lines) or a threadgroup in three passes over it,
// computing in float32.
func Softmax(out, in View, axis int) ([]Launch, error) {
	return softmaxFamily("metal.Softmax", "softmax", out, in, axis, false)
}

// LogSoftmax plans the logarithm of Softmax, computed without forming the
// softmax: (x - m) - log(sum(exp(x - m))) with m the maximum, or 0 when
// that is not finite.
func LogSoftmax(out, in View, axis int) ([]Launch, error) {
	return softmaxFamily("metal.LogSoftmax", "log_softmax", out, in, axis, false)
}

// LogSumExp plans log(sum(exp(x))) along axis of in into out (in's shape
// without the axis, in's dtype), shifted by the maximum; an empty line
// gives -inf.
func LogSumExp(out, in View, axis int) ([]Launch, error) {
	return softmaxFamily("metal.LogSumExp", "logsumexp", out, in, axis, true)
}

func softmaxFamily(name, kernel string, out, in View, axis int, reduced bool) ([]Launch, error) {
	if err := checkLineViews(name, out, in); err != nil {
		return nil, err
	}
	if !in.DType.IsFloat() {
		return nil, array.Errorf(name, "dtype %v is not a float dtype", in.DType)
	}
	if out.DType != in.DType {
		return nil, array.Errorf(name, "output dtype %v, want %v", out.DType, in.DType)
	}
	if out.Size() == 0 {
		return nil, nil
	}
	return lineLaunch(name, "softmax.metal", kernel+"_"+in.DType.String(), out, in, axis, reduced, nil)
}
