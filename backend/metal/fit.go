package metal

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/metal/internal/plan"
)

// defaultSimdWidth is the SIMD width of every Apple GPU, used when a
// pipeline reports none.
const defaultSimdWidth = 32

// fitLaunch returns l with its threadgroup shrunk to at most maxThreads
// threads and its grid recomputed as l.Fit says, or l itself if it
// already fits. simdWidth is the pipeline's threadExecutionWidth: the
// kernels that work on whole simdgroups (plan.FitSimd, plan.FitGroups) get a
// multiple of it. A launch that cannot shrink (plan.FitNone), or a limit below
// one simdgroup for a kernel that needs whole ones, is an *array.Error
// naming the kernel and the limit.
func fitLaunch(l Launch, maxThreads, simdWidth int) (Launch, error) {
	n := l.Group[0] * l.Group[1] * l.Group[2]
	if n <= maxThreads {
		return l, nil
	}
	if simdWidth <= 0 {
		simdWidth = defaultSimdWidth
	}
	if maxThreads < 1 {
		return l, array.Errorf("metal.Run", "kernel %s: its pipeline allows no threads per threadgroup", l.Kernel)
	}
	lim := maxThreads / simdWidth * simdWidth
	switch l.Fit {
	case plan.FitThreads:
		if lim == 0 {
			lim = maxThreads
		}
		g := l.Group
		g[0] = min(g[0], lim)
		g[1] = min(g[1], max(1, lim/g[0]))
		g[2] = min(g[2], max(1, lim/(g[0]*g[1])))
		l.Group = g
		return l, nil
	case plan.FitSimd, plan.FitGroups:
		if l.Group[1] != 1 || l.Group[2] != 1 {
			return l, array.Errorf("metal.Run", "kernel %s: threadgroup %v: %v needs a 1-D threadgroup", l.Kernel, l.Group, l.Fit)
		}
		if lim == 0 {
			return l, array.Errorf("metal.Run", "kernel %s works on whole simdgroups of %d threads; its pipeline allows at most %d threads per threadgroup",
				l.Kernel, simdWidth, maxThreads)
		}
		if l.Fit == plan.FitSimd {
			l.Grid[0] = (l.Grid[0] + lim - 1) / lim * lim
		} else {
			groups := (l.Grid[0] + l.Group[0] - 1) / l.Group[0]
			l.Grid[0] = groups * lim
		}
		l.Group[0] = lim
		return l, nil
	}
	return l, array.Errorf("metal.Run", "kernel %s needs threadgroups of exactly %d threads (%v); its pipeline allows at most %d",
		l.Kernel, n, l.Group, maxThreads)
}
