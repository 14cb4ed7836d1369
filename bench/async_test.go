package bench

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/compile"
	"github.com/fathom-go/fathom/internal/mlp"
	"github.com/fathom-go/fathom/internal/workload"
	"github.com/fathom-go/fathom/ops"
)

// BenchmarkAsyncTrainingLoop is a training loop of a compiled SGD step
// (mlp.TrainStep) on a two-layer MLP whose batches are decoded on the
// host (8-bit images gathered in shuffled order, scaled to float32,
// labels one-hot encoded), as a data loader does. "eval" evaluates each step before preparing the
// next; "async" starts each step with AsyncEval, then prepares and builds
// the next step while it runs, and waits only for the previous step's
// loss. It reports steps per second; the gain is the host's work that
// overlaps the kernels (docs/performance.md, Async evaluation).
func BenchmarkAsyncTrainingLoop(b *testing.B) {
	for _, c := range []struct{ batch, in, hidden int }{
		{32, 256, 64},
		{128, 784, 256},
	} {
		for _, mode := range []string{"eval", "async"} {
			b.Run(fmt.Sprintf("%s/batch=%d/%dx%dx10", mode, c.batch, c.in, c.hidden), func(b *testing.B) {
				l := newLoop(c.batch, c.in, c.hidden)
				defer l.step.Release()
				l.run(b, 3, mode == "async") // traces the step, fills the pools
				b.ResetTimer()
				l.run(b, b.N, mode == "async")
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
			})
		}
	}
}

const classes = mlp.Out

// trainLoop is the state of BenchmarkAsyncTrainingLoop's loop.
type trainLoop struct {
	batch, in int
	images    []uint8 // the data set, one image of in pixels per row
	labels    []uint8
	order     []int // shuffled rows, consumed a batch at a time
	next      int
	rng       *rand.Rand
	params    []*array.Array // w1, b1, w2, b2
	step      *compile.Func
	x, y      []float32 // the batch being decoded
}

func newLoop(batch, in, hidden int) *trainLoop {
	const rows = 4096
	rng := rand.New(rand.NewPCG(1, 2))
	l := &trainLoop{batch: batch, in: in, rng: rng, images: make([]uint8, rows*in), labels: make([]uint8, rows),
		order: rng.Perm(rows), x: make([]float32, batch*in), y: make([]float32, batch*classes)}
	for i := range l.images {
		l.images[i] = uint8(rng.IntN(256))
	}
	for i := range l.labels {
		l.labels[i] = uint8(rng.IntN(classes))
	}
	scaled := func(n int, seed uint64, s float32) []float32 {
		v := workload.RandF32(n, seed)
		for i := range v {
			v[i] *= s
		}
		return v
	}
	l.params = []*array.Array{
		array.FromSlice(scaled(in*hidden, 1, 0.05), in, hidden),
		array.FromSlice(make([]float32, hidden), hidden),
		array.FromSlice(scaled(hidden*classes, 2, 0.05), hidden, classes),
		array.FromSlice(make([]float32, classes), classes),
	}
	l.step = compile.Compile(mlp.TrainStep)
	return l
}

// loadBatch decodes the next batch on the host: pixels scaled to [0, 1)
// and centred, labels one-hot; a new epoch reshuffles.
func (l *trainLoop) loadBatch() (*array.Array, *array.Array) {
	if l.next+l.batch > len(l.order) {
		l.rng.Shuffle(len(l.order), func(i, j int) { l.order[i], l.order[j] = l.order[j], l.order[i] })
		l.next = 0
	}
	clear(l.y)
	for r := range l.batch {
		row := l.order[l.next+r]
		img := l.images[row*l.in : (row+1)*l.in]
		dst := l.x[r*l.in : (r+1)*l.in]
		for i, p := range img {
			dst[i] = float32(p)/255 - 0.5
		}
		l.y[r*classes+int(l.labels[row])] = 1
	}
	l.next += l.batch
	return array.FromSlice(l.x, l.batch, l.in), array.FromSlice(l.y, l.batch, classes)
}

// run trains n steps. The async loop keeps one step in flight: it starts
// step i, then waits for step i-1's loss, so the host prepares step i+1
// while step i runs.
func (l *trainLoop) run(b *testing.B, n int, async bool) {
	var prev *array.Array
	for range n {
		x, y := l.loadBatch()
		out := l.step.Call(append(l.params[:4:4], x, y)...)
		l.params = out[:4]
		loss := out[4]
		if !async {
			if err := array.Eval(out...); err != nil {
				b.Fatal(err)
			}
			if v := loss.Item(); v != v {
				b.Fatal("the loss is NaN")
			}
			continue
		}
		array.AsyncEval(out...)
		if prev != nil {
			if v := prev.Item(); v != v {
				b.Fatal("the loss is NaN")
			}
		}
		prev = loss
	}
	if prev != nil {
		if err := array.Eval(append(l.params, prev)...); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAsyncEvalHandoff measures what AsyncEval adds when nothing
// overlaps: one small op started and read at once, against Eval.
func BenchmarkAsyncEvalHandoff(b *testing.B) {
	x := array.FromSlice(workload.RandF32(16, 1), 16)
	b.Run("eval", func(b *testing.B) {
		for b.Loop() {
			mustEval(b, ops.AddScalar(x, 1))
		}
	})
	b.Run("async", func(b *testing.B) {
		for b.Loop() {
			y := ops.AddScalar(x, 1)
			array.AsyncEval(y)
			mustEval(b, y)
		}
	})
}
