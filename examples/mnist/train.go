package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/compile"
	"github.com/fathom-go/fathom/nn"
	"github.com/fathom-go/fathom/ops"
	"github.com/fathom-go/fathom/optim"
	"github.com/fathom-go/fathom/random"
)

// stepper runs one training step on a batch (images, labels) and returns
// the loss. The default is optim.CompileStep's compiled step: forward,
// backward and Adam's update in one replayed trace. A data-parallel step
// (each rank's gradients of its share of the batch averaged before the
// update) is another stepper, compiled around nn.ValueAndGrad and the
// optimiser's Apply; nothing else in the loop changes.
type stepper interface {
	Call(batch ...*array.Array) (*array.Array, error)
	Release()
}

// progress is where a run is: what a checkpoint records besides the
// model's and the optimiser's arrays, so that a resumed run continues
// exactly where the saved one stopped.
type progress struct {
	// the run's shape: a resumed run must have the same
	Model       string  `json:"model"`
	Hidden      int     `json:"hidden"`
	Batch       int     `json:"batch"`
	TrainSubset int     `json:"train_subset"`
	Seed        uint64  `json:"seed"`
	LR          float64 `json:"lr"`
	LRDecay     float64 `json:"lr_decay"`

	Step  int `json:"step"`  // updates made
	Epoch int `json:"epoch"` // epochs completed
	// DataKey is the random key of epoch Epoch's data order: it splits
	// into the next epoch's DataKey and the key of this one's permutation.
	// A checkpoint keeps it as an array beside the rest.
	DataKey [2]uint32 `json:"-"`

	Loss      []float64 `json:"loss"`       // the loss of every step
	EvalSteps []int     `json:"eval_steps"` // the steps after which the test set was scored
	Accuracy  []float64 `json:"accuracy"`   // the test accuracy then
}

// trainer holds a run: the model, its optimiser and step, the data.
type trainer struct {
	cfg         config
	model       nn.Layer
	opt         *optim.Adam
	step        stepper
	eval        *evaluator
	train, test dataset
	prog        progress
	out         io.Writer // epoch summaries
}

// newTrainer makes a run's model and optimiser from cfg, or reads them
// from the checkpoint cfg.resume names.
func newTrainer(cfg config, train, test dataset, out io.Writer) (*trainer, error) {
	root := ops.Unstack(random.Split(random.Key(cfg.seed), 2), 0)
	initKey, dataKey := root[0], root[1]
	hidden := cfg.hidden
	if cfg.model != "mlp" {
		hidden = 0 // the CNN has none
	}
	t := &trainer{
		cfg:   cfg,
		model: newModel(cfg.model, initKey, cfg.hidden),
		opt:   optim.NewAdam(cfg.lr),
		train: train.subset(cfg.trainSubset),
		test:  test.subset(cfg.testSubset),
		out:   out,
		prog: progress{
			Model: cfg.model, Hidden: hidden, Batch: cfg.batch,
			TrainSubset: cfg.trainSubset, Seed: cfg.seed, LR: cfg.lr, LRDecay: cfg.lrDecay,
		},
	}
	key, err := array.ToSlice[uint32](dataKey)
	if err != nil {
		return nil, err
	}
	t.prog.DataKey = [2]uint32(key)
	if cfg.resume != "" {
		if err := t.load(cfg.resume); err != nil {
			return nil, err
		}
	}
	if cfg.lrDecay != 1 {
		t.opt.Schedule = optim.StepDecay(cfg.lr, cfg.lrDecay, t.stepsPerEpoch())
	}
	if cfg.distributed {
		if t.step, err = newShardedStep(t); err != nil {
			return nil, err
		}
	} else {
		// the model and the optimiser are all that hold the parameters
		// and the state, so each step can take their memory
		t.step = optim.CompileStep(t.model, t.opt, loss, optim.Donate())
	}
	t.eval = newEvaluator(t.model)
	return t, nil
}

// release drops the compiled functions.
func (t *trainer) release() {
	t.step.Release()
	t.eval.release()
}

// stepsPerEpoch is the number of full batches in the training set; the
// examples left over wait for another epoch's order.
func (t *trainer) stepsPerEpoch() int { return t.train.size() / t.cfg.batch }

// run trains until cfg.epochs epochs or cfg.steps steps are done,
// scoring the test set after each epoch and at the end, saving a
// checkpoint then when cfg.save is set.
func (t *trainer) run() error {
	spe := t.stepsPerEpoch()
	for t.prog.Epoch < t.cfg.epochs && !t.stepLimit() {
		start := time.Now()
		first := t.prog.Step - t.prog.Epoch*spe
		ks := ops.Unstack(random.Split(array.FromSlice(t.prog.DataKey[:]), 2), 0)
		order := random.Permutation(ks[1], t.train.size())
		bar := t.newBar(spe, first)
		var sum float64
		i := first
		for ; i < spe && !t.stepLimit(); i++ {
			idx := ops.SliceAxis(order, 0, ops.R(i*t.cfg.batch, (i+1)*t.cfg.batch))
			l, err := t.step.Call(ops.Take(t.train.images, idx, 0), ops.Take(t.train.labels, idx, 0))
			if err != nil {
				return err
			}
			t.prog.Step++
			v := l.Item()
			t.prog.Loss = append(t.prog.Loss, v)
			sum += v
			if bar != nil {
				bar.Describe(fmt.Sprintf("epoch %d/%d loss %.4f", t.prog.Epoch+1, t.cfg.epochs, v))
				// an error here is the terminal's; the training goes on
				_ = bar.Add(t.cfg.batch)
			}
		}
		if bar != nil {
			_ = bar.Finish()
		}
		took := time.Since(start)
		if i == spe {
			next, err := array.ToSlice[uint32](ks[0])
			if err != nil {
				return err
			}
			t.prog.Epoch++
			t.prog.DataKey = [2]uint32(next)
		}
		evalStart := time.Now()
		if err := t.score(); err != nil {
			return err
		}
		evalTook := time.Since(evalStart)
		epoch := t.prog.Epoch // the one just completed, or the one stopped in
		if i < spe {
			epoch++
		}
		n := i - first
		fmt.Fprintf(t.out, "epoch %d/%d  step %d  train loss %.4f  test accuracy %.2f%%  %.1f s (%.0f examples/s), scored in %.2f s\n",
			epoch, t.cfg.epochs, t.prog.Step, sum/float64(max(n, 1)),
			100*t.accuracy(), took.Seconds(), float64(n*t.cfg.batch)/took.Seconds(), evalTook.Seconds())
		if t.cfg.save != "" {
			if err := t.saveTo(t.cfg.save); err != nil {
				return err
			}
		}
	}
	if len(t.prog.EvalSteps) == 0 || t.prog.EvalSteps[len(t.prog.EvalSteps)-1] != t.prog.Step {
		return t.score()
	}
	return nil
}

// stepLimit reports whether cfg.steps steps are done.
func (t *trainer) stepLimit() bool { return t.cfg.steps > 0 && t.prog.Step >= t.cfg.steps }

// score records the test accuracy after the current step.
func (t *trainer) score() error {
	acc, err := t.testAccuracy()
	if err != nil {
		return err
	}
	t.prog.EvalSteps = append(t.prog.EvalSteps, t.prog.Step)
	t.prog.Accuracy = append(t.prog.Accuracy, acc)
	return nil
}

// accuracy is the last test accuracy recorded.
func (t *trainer) accuracy() float64 {
	if len(t.prog.Accuracy) == 0 {
		return 0
	}
	return t.prog.Accuracy[len(t.prog.Accuracy)-1]
}

// newBar returns a progress bar over an epoch's examples, or nil when
// cfg.quiet is set. Its rate is examples per second.
func (t *trainer) newBar(steps, done int) *progressbar.ProgressBar {
	if t.cfg.quiet {
		return nil
	}
	bar := progressbar.NewOptions(steps*t.cfg.batch,
		progressbar.OptionSetWriter(os.Stderr),
		progressbar.OptionSetDescription(fmt.Sprintf("epoch %d/%d", t.prog.Epoch+1, t.cfg.epochs)),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("examples"),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
	_ = bar.Set(done * t.cfg.batch)
	return bar
}

// evaluator scores a model on a dataset with one compiled function of
// the parameters and a batch, replayed over the batches. The parameters
// are its inputs, not arrays it captures, so one trace serves every
// evaluation however the training has changed them.
type evaluator struct {
	model nn.Layer
	names []string // the model's parameters, in the order of the inputs
	f     *compile.Func
}

func newEvaluator(m nn.Layer) *evaluator {
	e := &evaluator{model: m, names: slices.Sorted(maps.Keys(nn.Parameters(m)))}
	e.f = compile.Compile(func(in ...*array.Array) []*array.Array {
		// tracing puts the inputs in the model; the model gets its own
		// arrays back before the trace is replayed
		own := nn.Parameters(m)
		ps := make(map[string]*array.Array, len(e.names))
		for i, name := range e.names {
			ps[name] = in[i]
		}
		if err := nn.Update(m, ps); err != nil {
			panic(err)
		}
		defer func() {
			if err := nn.Update(m, own); err != nil {
				panic(err)
			}
		}()
		n := len(e.names)
		return []*array.Array{correct(m, in[n], in[n+1])}
	})
	return e
}

func (e *evaluator) release() { e.f.Release() }

// accuracy is the fraction of d the model classifies right, in batches
// of at most batch examples.
func (e *evaluator) accuracy(d dataset, batch int) (float64, error) {
	params := nn.Parameters(e.model)
	args := make([]*array.Array, len(e.names), len(e.names)+2)
	for i, name := range e.names {
		args[i] = params[name]
	}
	n := d.size()
	right := 0
	for i := 0; i < n; i += batch {
		r := ops.R(i, min(i+batch, n))
		c := e.f.Call(append(args, ops.SliceAxis(d.images, 0, r), ops.SliceAxis(d.labels, 0, r))...)[0]
		if err := c.Eval(); err != nil {
			return 0, err
		}
		right += int(c.Item())
	}
	return float64(right) / float64(n), nil
}
