package main

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/compile"
	"github.com/fathom-go/fathom/distributed"
	"github.com/fathom-go/fathom/nn"
	"github.com/fathom-go/fathom/ops"
	"github.com/fathom-go/fathom/optim"
)

// Data-parallel training (-distributed), as MLX's mnist example under
// mpirun: every process runs this program, holds the whole model and
// draws the same global batch from the same data order; process r of n
// computes the gradients of rows [r·B/n, (r+1)·B/n) of it, the gradients
// are averaged over the processes (nn.AverageGradients: a few
// all-reduces), and every process makes the same update. The mean of the
// n shards' mean gradients is the gradient of the global batch's mean
// loss, so the run takes the single-process run's steps, up to the order
// of the sums. Process 0 alone prints, plots and writes checkpoints.

// joinRun starts the job of a -distributed run and returns what this
// process is to do of cfg and where its summaries go: the processes other
// than 0 train silently, writing no plot and no checkpoint.
func joinRun(cfg config, out io.Writer) (config, io.Writer, error) {
	if !cfg.distributed {
		return cfg, out, nil
	}
	g, err := distributed.Init()
	if err != nil {
		return cfg, out, err
	}
	if g.Rank() != 0 {
		cfg.quiet, cfg.plot, cfg.save = true, "", ""
		out = io.Discard
	}
	return cfg, out, nil
}

// shardedStep is the data-parallel training step: one compiled function
// of the parameters, the optimiser's state and this process's shard of
// the batch, whose trace holds the forward and backward passes, the
// all-reduces of the gradients and of the loss, and Adam's update. The
// all-reduces are collectives, which a replay runs on every call.
type shardedStep struct {
	model  nn.Layer
	opt    *optim.Adam
	group  *distributed.Group
	params []string // the model's parameters, in the order of the inputs
	state  []string // the optimiser's state, after the parameters
	f      *compile.Func
	donate []int // the inputs each call gives up: parameters and state
}

// newShardedStep makes t's step for the job this process is part of (a
// job of one outside mpirun). The global batch must split into equal
// shards: shards of different sizes would weigh their examples unequally
// in the average of the gradients.
func newShardedStep(t *trainer) (*shardedStep, error) {
	g, err := distributed.Init()
	if err != nil {
		return nil, err
	}
	if n := g.Size(); t.cfg.batch%n != 0 {
		return nil, fmt.Errorf("-batch %d with -distributed: each of the %d processes takes an equal share of every batch; pass a multiple of %d", t.cfg.batch, n, n)
	}
	params := nn.Parameters(t.model)
	t.opt.Init(params)
	s := &shardedStep{
		model:  t.model,
		opt:    t.opt,
		group:  g,
		params: slices.Sorted(maps.Keys(params)),
		state:  slices.Sorted(maps.Keys(t.opt.State())),
	}
	s.f = compile.Compile(s.traced)
	for i := range len(s.params) + len(s.state) {
		s.donate = append(s.donate, i)
	}
	return s, nil
}

func (s *shardedStep) traced(in ...*array.Array) []*array.Array {
	np, ns := len(s.params), len(s.state)
	params := named(s.params, in[:np])
	// the model computes with the inputs; Call gives it its own arrays back
	if err := nn.Update(s.model, params); err != nil {
		panic(err)
	}
	l, grads := nn.ValueAndGrad(s.model, loss)(in[np+ns:]...)
	grads = nn.AverageGradients(grads, s.group)
	newParams, newState := s.opt.Apply(params, grads, named(s.state, in[np:np+ns]))
	if n := s.group.Size(); n > 1 {
		l = ops.DivScalar(distributed.AllSum(l, s.group), float64(n))
	}
	outs := make([]*array.Array, 0, 1+np+ns)
	outs = append(outs, l)
	for _, name := range s.params {
		outs = append(outs, newParams[name])
	}
	for _, name := range s.state {
		outs = append(outs, newState[name])
	}
	return outs
}

// Call takes a step on the global batch (images, labels), of which this
// process computes its shard, and returns the loss of the global batch.
// It donates the parameters and the optimiser's state to the step, as
// optim.Donate does: the new ones take their memory.
func (s *shardedStep) Call(batch ...*array.Array) (*array.Array, error) {
	n, r := s.group.Size(), s.group.Rank()
	rows := batch[0].Shape()[0]
	own := nn.Parameters(s.model)
	state := s.opt.State()
	args := make([]*array.Array, 0, len(s.params)+len(s.state)+len(batch))
	for _, name := range s.params {
		args = append(args, own[name])
	}
	for _, name := range s.state {
		args = append(args, state[name])
	}
	// compile donates only evaluated inputs, and new state is lazy zeros
	if err := array.Eval(args...); err != nil {
		return nil, err
	}
	for _, x := range batch {
		args = append(args, ops.SliceAxis(x, 0, ops.R(r*rows/n, (r+1)*rows/n)))
	}
	outs := func() []*array.Array {
		defer func() {
			if err := nn.Update(s.model, own); err != nil {
				panic(err)
			}
		}()
		return s.f.CallDonating(s.donate, args...)
	}()
	if err := array.Eval(outs...); err != nil {
		return nil, err
	}
	np := len(s.params)
	if err := nn.Update(s.model, named(s.params, outs[1:1+np])); err != nil {
		return nil, err
	}
	if err := s.opt.SetState(named(s.state, outs[1+np:])); err != nil {
		return nil, err
	}
	return outs[0], nil
}

func (s *shardedStep) Release() { s.f.Release() }

// named maps names[i] to xs[i].
func named(names []string, xs []*array.Array) map[string]*array.Array {
	m := make(map[string]*array.Array, len(names))
	for i, name := range names {
		m[name] = xs[i]
	}
	return m
}

// testAccuracy scores the test set. In a job of several processes each
// scores its share of the rows and the numbers right are summed, so every
// process gets the accuracy of the whole set in a share of the time.
func (t *trainer) testAccuracy() (float64, error) {
	s, ok := t.step.(*shardedStep)
	if !ok || s.group.Size() == 1 {
		return t.eval.accuracy(t.test, t.cfg.evalBatch)
	}
	n, r, size := t.test.size(), s.group.Rank(), s.group.Size()
	lo, hi := r*n/size, (r+1)*n/size
	right := 0
	if hi > lo {
		acc, err := t.eval.accuracy(t.test.rows(lo, hi), t.cfg.evalBatch)
		if err != nil {
			return 0, err
		}
		right = int(math.Round(acc * float64(hi-lo)))
	}
	sum := distributed.AllSum(array.FromSlice([]int32{int32(right)}), s.group)
	if err := sum.Eval(); err != nil {
		return 0, err
	}
	return sum.Item() / float64(n), nil
}

// rows is the examples lo to hi-1.
func (d dataset) rows(lo, hi int) dataset {
	return dataset{images: ops.SliceAxis(d.images, 0, ops.R(lo, hi)), labels: ops.SliceAxis(d.labels, 0, ops.R(lo, hi))}
}
