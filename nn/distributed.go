package nn

import (
	"cmp"
	"slices"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// Group is what AverageGradients needs of a set of processes: their
// number and an elementwise sum over them. A *distributed.Group is one
// (package nn sits below package distributed and cannot name it).
type Group interface {
	Size() int
	AllSum(x *array.Array) *array.Array
}

// AverageOption configures AverageGradients.
type AverageOption func(*averageConfig)

type averageConfig struct{ size int }

// AllReduceSize bounds, in bytes, the buffers AverageGradients packs
// gradients into (MLX's all_reduce_size, 32 MiB by default); a gradient
// larger than the bound is summed on its own, and 0 or less sums every
// gradient on its own.
func AllReduceSize(bytes int) AverageOption { return func(c *averageConfig) { c.size = bytes } }

// AverageGradients returns the mean of grads over the processes of g, as
// MLX's nn.average_gradients, for data-parallel training: each process
// computes gradients on its shard of the batch and steps with the average.
// It concatenates small gradients of one dtype into buffers of up to
// AllReduceSize bytes, so a step makes a few all-reduces rather than one a
// parameter. Every process must pass gradients of the same names, shapes
// and dtypes. Nil gradients stay nil. The result is lazy, like the
// collectives it is made of; with g of size 1 it is grads' arrays.
func AverageGradients(grads map[string]*array.Array, g Group, opts ...AverageOption) map[string]*array.Array {
	c := averageConfig{size: 32 << 20}
	for _, o := range opts {
		o(&c)
	}
	if g == nil {
		array.Panicf("nn.AverageGradients", "nil group")
	}
	out := make(map[string]*array.Array, len(grads))
	var names []string
	for name, x := range grads {
		out[name] = x
		if x != nil {
			names = append(names, name)
		}
	}
	n := g.Size()
	if n == 1 {
		return out
	}
	// Every process packs in the same order: by dtype, then by name.
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(grads[a].DType(), grads[b].DType()), cmp.Compare(a, b))
	})
	var bucket []string
	bytes := 0
	flush := func() {
		if len(bucket) == 1 {
			out[bucket[0]] = ops.DivScalar(g.AllSum(grads[bucket[0]]), float64(n))
		} else if len(bucket) > 1 {
			flat := make([]*array.Array, len(bucket))
			for i, name := range bucket {
				flat[i] = ops.Flatten(grads[name])
			}
			sum := ops.DivScalar(g.AllSum(ops.Concatenate(flat, 0)), float64(n))
			off := 0
			for _, name := range bucket {
				x := grads[name]
				out[name] = ops.Reshape(ops.SliceAxis(sum, 0, ops.R(off, off+x.Size())), x.Shape()...)
				off += x.Size()
			}
		}
		bucket, bytes = bucket[:0], 0
	}
	for _, name := range names {
		x := grads[name]
		if len(bucket) > 0 && (bytes+x.NBytes() > c.size || grads[bucket[0]].DType() != x.DType()) {
			flush()
		}
		bucket = append(bucket, name)
		bytes += x.NBytes()
	}
	flush()
	return out
}
