package optim

import (
	"math"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// The schedules below are MLX's optimizers.schedulers, as functions of
// the step count array. Each checks its arguments when it is made.

// StepDecay multiplies init by rate every stepSize steps:
// init * rate^floor(step/stepSize), as MLX's step_decay and PyTorch's
// StepLR.
func StepDecay(init, rate float64, stepSize int) Schedule {
	if stepSize < 1 {
		array.Panicf("optim.StepDecay", "stepSize %d, want at least 1", stepSize)
	}
	return func(step *array.Array) *array.Array {
		k := ops.Floor(ops.DivScalar(step, float64(stepSize)))
		return ops.MulScalar(ops.Pow(ops.FullLike(step, rate), k), init)
	}
}

// ExponentialDecay multiplies init by rate every step: init * rate^step,
// as MLX's exponential_decay and PyTorch's ExponentialLR.
func ExponentialDecay(init, rate float64) Schedule {
	return func(step *array.Array) *array.Array {
		return ops.MulScalar(ops.Pow(ops.FullLike(step, rate), step), init)
	}
}

// CosineDecay follows half a cosine from init down to end over
// decaySteps steps, then stays at end, as MLX's cosine_decay:
// end + (init-end)*(1+cos(pi*min(step, decaySteps)/decaySteps))/2.
// PyTorch's CosineAnnealingLR gives the same values up to decaySteps
// (its T_max) but climbs back afterwards.
func CosineDecay(init float64, decaySteps int, end float64) Schedule {
	if decaySteps < 1 {
		array.Panicf("optim.CosineDecay", "decaySteps %d, want at least 1", decaySteps)
	}
	return func(step *array.Array) *array.Array {
		s := ops.MinimumScalar(step, float64(decaySteps))
		c := ops.Cos(ops.MulScalar(s, math.Pi/float64(decaySteps)))
		return ops.AddScalar(ops.MulScalar(ops.AddScalar(c, 1), 0.5*(init-end)), end)
	}
}

// LinearSchedule goes in a straight line from init to end over steps
// steps, then stays at end, as MLX's linear_schedule: the usual warm-up
// is LinearSchedule(0, lr, warmup) joined to another schedule. PyTorch's
// LinearLR(start_factor, end_factor, total_iters) is
// LinearSchedule(lr*start_factor, lr*end_factor, total_iters).
func LinearSchedule(init, end float64, steps int) Schedule {
	if steps < 1 {
		array.Panicf("optim.LinearSchedule", "steps %d, want at least 1", steps)
	}
	return func(step *array.Array) *array.Array {
		s := ops.MinimumScalar(step, float64(steps))
		return ops.AddScalar(ops.MulScalar(s, (end-init)/float64(steps)), init)
	}
}

// JoinSchedules runs schedules one after another, as MLX's
// join_schedules: schedules[i+1] takes over at step boundaries[i], and
// sees the steps counted from its boundary. It needs one boundary fewer
// than schedules.
//
//	warm := optim.JoinSchedules(
//		[]optim.Schedule{optim.LinearSchedule(0, 1e-3, 100), optim.CosineDecay(1e-3, 900, 0)},
//		[]int{100})
func JoinSchedules(schedules []Schedule, boundaries []int) Schedule {
	const op = "optim.JoinSchedules"
	if len(schedules) == 0 {
		array.Panicf(op, "no schedules")
	}
	if len(boundaries) != len(schedules)-1 {
		array.Panicf(op, "%d schedules need %d boundaries, have %d", len(schedules), len(schedules)-1, len(boundaries))
	}
	for i, s := range schedules {
		if s == nil {
			array.Panicf(op, "schedule %d is nil", i)
		}
	}
	return func(step *array.Array) *array.Array {
		out := schedules[0](step)
		for i, b := range boundaries {
			next := schedules[i+1](ops.SubScalar(step, float64(b)))
			out = ops.Where(ops.LessScalar(step, float64(b)), out, next)
		}
		return out
	}
}
