package ops

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/fathom-go/fathom/array"
)

// Einsum labels are letters. A set of them is a bit mask in ASCII order
// ('A'..'Z' then 'a'..'z'), so a mask's bits list its labels sorted as
// numpy sorts an implicit output.
type labelSet uint64

func labelBit(c byte) labelSet {
	if c >= 'a' {
		return 1 << (26 + c - 'a')
	}
	return 1 << (c - 'A')
}

func labelOf(i int) byte {
	if i >= 26 {
		return byte('a' + i - 26)
	}
	return byte('A' + i)
}

func isLabel(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func setOf(ls []byte) labelSet {
	var s labelSet
	for _, c := range ls {
		s |= labelBit(c)
	}
	return s
}

func (s labelSet) labels() []byte {
	var out []byte
	for m := uint64(s); m != 0; m &= m - 1 {
		out = append(out, labelOf(bits.TrailingZeros64(m)))
	}
	return out
}

// EinsumStep is one contraction of an EinsumPlan.
type EinsumStep struct {
	// Operands are the positions, in the list of operands before the
	// step, of the one or two operands it contracts (numpy's path
	// tuples). They leave the list and the step's result joins its end.
	Operands []int
	// Subscripts is the step as an einsum of its operands, in the labels
	// of the plan's Subscripts ("jk,ij->ik").
	Subscripts string
	// FLOPs is numpy's count for the step: the product of the sizes of
	// its labels, doubled when it sums over a label.
	FLOPs float64
}

// EinsumPlan is the order in which Einsum contracts its operands, as
// EinsumPath returns it.
type EinsumPlan struct {
	// Subscripts is the contraction in explicit form, with each ellipsis
	// spelled out as letters the subscripts did not use (as numpy does).
	Subscripts string
	// Steps are the contractions, in order.
	Steps []EinsumStep
	// FLOPs is the sum of the steps' FLOPs; numpy's report adds 1 to it.
	FLOPs float64
	// NaiveFLOPs is numpy's count for contracting every operand at once.
	NaiveFLOPs float64
	// LargestIntermediate is the number of elements of the largest of the
	// operands, the steps' results and the output.
	LargestIntermediate int

	spec einsumSpec
	// prepared are the operands' labels after Einsum has taken the
	// diagonals of repeated labels and dropped broadcast size-1 axes.
	prepared [][]byte
}

// einsumSpec is parsed subscripts.
type einsumSpec struct {
	inputs [][]byte // each operand's labels, an ellipsis spelled out
	output []byte
	size   [52]int // each label's size, broadcast over the operands
}

// parseEinsum checks subscripts against the operands' shapes with
// numpy's grammar and spells out the ellipses.
func parseEinsum(op, subscripts string, shapes [][]int) (einsumSpec, error) {
	var sp einsumSpec
	bad := func(format string, args ...any) (einsumSpec, error) {
		return einsumSpec{}, array.Errorf(op, "subscripts %q with shapes %v: %s", subscripts, shapesText(shapes), fmt.Sprintf(format, args...))
	}
	s := strings.ReplaceAll(subscripts, " ", "")
	in, out, explicit := strings.Cut(s, "->")
	if strings.Contains(out, "->") || strings.ContainsAny(in, "->") || strings.ContainsAny(out, "->,") {
		return bad("'->' must appear at most once, between the inputs and the output")
	}
	terms := strings.Split(in, ",")
	if len(terms) != len(shapes) {
		return bad("%d terms for %d operands", len(terms), len(shapes))
	}
	check := func(term string) (string, bool, error) {
		before, after, ell := strings.Cut(term, "...")
		rest := before + after
		if strings.Contains(after, "...") || strings.Contains(rest, ".") {
			_, err := bad("%q: '.' only in one ellipsis '...'", term)
			return "", false, err
		}
		for i := 0; i < len(rest); i++ {
			if !isLabel(rest[i]) {
				_, err := bad("%q: %q is not a letter", term, rest[i])
				return "", false, err
			}
		}
		return term, ell, nil
	}
	var used labelSet
	ellDims := make([]int, len(terms))
	longest := 0
	for i, t := range terms {
		_, ell, err := check(t)
		if err != nil {
			return sp, err
		}
		n := len(strings.ReplaceAll(t, "...", ""))
		used |= setOf([]byte(strings.ReplaceAll(t, "...", "")))
		switch nd := len(shapes[i]); {
		case ell && n > nd:
			return bad("term %d (%q) has %d labels for the %d dimensions of operand %d", i, t, n, nd, i)
		case ell:
			ellDims[i] = nd - n
		case n != nd:
			return bad("term %d (%q) has %d labels for the %d dimensions of operand %d", i, t, n, nd, i)
		}
		longest = max(longest, ellDims[i])
	}
	if explicit {
		if _, _, err := check(out); err != nil {
			return sp, err
		}
		used |= setOf([]byte(strings.ReplaceAll(out, "...", "")))
	}
	free := (^used) & (1<<52 - 1)
	if bits.OnesCount64(uint64(free)) < longest {
		return bad("the ellipsis spans %d dimensions, more than the %d unused letters", longest, bits.OnesCount64(uint64(free)))
	}
	ellLabels := free.labels()[:longest]
	sp.inputs = make([][]byte, len(terms))
	for i, t := range terms {
		before, after, _ := strings.Cut(t, "...")
		sp.inputs[i] = slices.Concat([]byte(before), ellLabels[longest-ellDims[i]:], []byte(after))
	}
	var counts [52]int
	for _, ls := range sp.inputs {
		for _, c := range ls {
			counts[bits.TrailingZeros64(uint64(labelBit(c)))]++
		}
	}
	if explicit {
		before, after, ell := strings.Cut(out, "...")
		if !ell && longest > 0 {
			return bad("the operands' ellipsis spans %d dimensions, and the output has no '...' for them", longest)
		}
		sp.output = slices.Concat([]byte(before), ellLabels, []byte(after))
		var seen labelSet
		for _, c := range sp.output {
			if seen&labelBit(c) != 0 {
				return bad("output label %q appears more than once", c)
			}
			seen |= labelBit(c)
			if counts[bits.TrailingZeros64(uint64(labelBit(c)))] == 0 {
				return bad("output label %q is in no operand", c)
			}
		}
	} else {
		sp.output = slices.Clone(ellLabels)
		ellSet := setOf(ellLabels)
		for i, n := range counts {
			if n == 1 && ellSet&labelBit(labelOf(i)) == 0 {
				sp.output = append(sp.output, labelOf(i))
			}
		}
	}
	for i := range sp.size {
		sp.size[i] = -1
	}
	for i, ls := range sp.inputs {
		var own [52]int
		for j, c := range ls {
			k := bits.TrailingZeros64(uint64(labelBit(c)))
			d := shapes[i][j]
			if own[k] != 0 && own[k]-1 != d {
				return bad("label %q repeats in term %d with sizes %d and %d", c, i, own[k]-1, d)
			}
			own[k] = d + 1
			switch prev := sp.size[k]; {
			case prev < 0 || prev == 1:
				sp.size[k] = d
			case d != 1 && d != prev:
				return bad("label %q has size %d in operand %d and %d in an earlier one", c, d, i, prev)
			}
		}
	}
	return sp, nil
}

// prepare returns the labels of operand i after Einsum takes the
// diagonal of each repeated label (which moves it last) and drops the
// axes that broadcast (size 1 where the label is larger elsewhere), and
// the steps that do so: pairs of axes to take the diagonal of, then axes
// to squeeze.
func (sp *einsumSpec) prepare(i int, shape []int) (labels []byte, diags [][2]int, squeeze []int) {
	labels = slices.Clone(sp.inputs[i])
	shape = slices.Clone(shape)
	for {
		p, q := -1, -1
		for j := 0; j < len(labels) && p < 0; j++ {
			for k := j + 1; k < len(labels); k++ {
				if labels[k] == labels[j] {
					p, q = j, k
					break
				}
			}
		}
		if p < 0 {
			break
		}
		diags = append(diags, [2]int{p, q})
		c, d := labels[p], shape[p]
		labels = append(slices.Delete(slices.Delete(labels, q, q+1), p, p+1), c)
		shape = append(slices.Delete(slices.Delete(shape, q, q+1), p, p+1), d)
	}
	kept := labels[:0:0]
	for j, c := range labels {
		if shape[j] == 1 && sp.sizeOf(c) != 1 {
			squeeze = append(squeeze, j)
			continue
		}
		kept = append(kept, c)
	}
	return kept, diags, squeeze
}

func (sp *einsumSpec) sizeOf(c byte) int { return sp.size[bits.TrailingZeros64(uint64(labelBit(c)))] }

// setSize is the number of elements of an array with labels s.
func (sp *einsumSpec) setSize(s labelSet) float64 {
	n := 1.0
	for m := uint64(s); m != 0; m &= m - 1 {
		n *= float64(sp.size[bits.TrailingZeros64(m)])
	}
	return n
}

// flops is numpy's _flop_count: the product of the sizes of the labels
// of a contraction of terms operands, times terms-1 (at least 1), plus
// one more when it sums over a label.
func (sp *einsumSpec) flops(labels labelSet, inner bool, terms int) float64 {
	f := float64(max(1, terms-1))
	if inner {
		f++
	}
	return sp.setSize(labels) * f
}

// pairStep is the contraction of two label sets with the others still to
// come: its result's labels and cost.
func (sp *einsumSpec) pairStep(sets []labelSet, i, j int) (labelSet, float64) {
	keep := setOf(sp.output)
	for k, s := range sets {
		if k != i && k != j {
			keep |= s
		}
	}
	union := sets[i] | sets[j]
	return union & keep, sp.flops(union, union&^keep != 0, 2)
}

// contractAt returns sets with i and j replaced by r at the end.
func contractAt(sets []labelSet, i, j int, r labelSet) []labelSet {
	out := make([]labelSet, 0, len(sets)-1)
	for k, s := range sets {
		if k != i && k != j {
			out = append(out, s)
		}
	}
	return append(out, r)
}

// optimalPath tries every order of pairwise contractions (18 for four
// operands) and returns the cheapest.
func (sp *einsumSpec) optimalPath(sets []labelSet) ([][2]int, float64) {
	if len(sets) < 2 {
		return nil, 0
	}
	var best [][2]int
	bestCost := math.Inf(1)
	for i := range sets {
		for j := i + 1; j < len(sets); j++ {
			r, c := sp.pairStep(sets, i, j)
			rest, rc := sp.optimalPath(contractAt(sets, i, j, r))
			if c+rc < bestCost {
				bestCost = c + rc
				best = append([][2]int{{i, j}}, rest...)
			}
		}
	}
	return best, bestCost
}

// greedyPath is numpy's greedy order (opt_einsum's): at each step the
// pair whose contraction removes the most elements (inputs' sizes less
// the result's), the cheaper on a tie; outer products only when no pair
// shares a label. limit, if positive, excludes results larger than it, as
// numpy's memory limit does; ok is false if that leaves no pair.
func (sp *einsumSpec) greedyPath(sets []labelSet, limit float64) (path [][2]int, cost float64, ok bool) {
	for len(sets) > 1 {
		found := false
		var bi, bj int
		var br labelSet
		var bRemoved, bCost float64
		for _, outer := range []bool{false, true} {
			for i := range sets {
				for j := i + 1; j < len(sets); j++ {
					if !outer && sets[i]&sets[j] == 0 {
						continue
					}
					r, c := sp.pairStep(sets, i, j)
					size := sp.setSize(r)
					if limit > 0 && size > limit {
						continue
					}
					removed := sp.setSize(sets[i]) + sp.setSize(sets[j]) - size
					if !found || removed > bRemoved || removed == bRemoved && c < bCost {
						found, bi, bj, br, bRemoved, bCost = true, i, j, r, removed, c
					}
				}
			}
			if found {
				break
			}
		}
		if !found {
			return nil, 0, false
		}
		path = append(path, [2]int{bi, bj})
		cost += bCost
		sets = contractAt(sets, bi, bj, br)
	}
	return path, cost, true
}

// pairLabels splits the labels of two operands for their contraction,
// keep being the labels needed later: those to sum out of either alone,
// and the batch, contracted and free labels, in the order the operands
// have them. The result's labels are batch, then a's free, then b's.
func pairLabels(la, lb []byte, keep labelSet) (sumA, sumB, batch, inner, freeA, freeB []byte) {
	sa, sb := setOf(la), setOf(lb)
	for _, c := range la {
		switch bit := labelBit(c); {
		case sb&bit == 0 && keep&bit == 0:
			sumA = append(sumA, c)
		case sb&bit == 0:
			freeA = append(freeA, c)
		case keep&bit != 0:
			batch = append(batch, c)
		default:
			inner = append(inner, c)
		}
	}
	for _, c := range lb {
		if bit := labelBit(c); sa&bit == 0 {
			if keep&bit == 0 {
				sumB = append(sumB, c)
			} else {
				freeB = append(freeB, c)
			}
		}
	}
	return
}

// leftFirst reports whether the last contraction, of operands with
// labels la and lb, should keep la on the left of its MatMul: it puts b
// on the left when b's first free label comes earlier in the output than
// a's, so that the product comes out in the output's order rather than as
// the transposed view of a product of transposed operands, which measured
// slower (docs/ops.md, einsum). Intermediate results keep their operands'
// order: the next step reads a transposed operand in place.
func leftFirst(la, lb, output []byte) bool {
	first := func(l, other []byte) int {
		for _, c := range l {
			if !slices.Contains(other, c) {
				if k := slices.Index(output, c); k >= 0 {
					return k
				}
				return len(output)
			}
		}
		return len(output)
	}
	return first(lb, la) >= first(la, lb)
}

// planEinsum parses subscripts and chooses the contraction order: every
// order for up to four operands, numpy's greedy order (with and without
// its memory limit, the cheaper) for more.
func planEinsum(op, subscripts string, shapes [][]int) (*EinsumPlan, error) {
	sp, err := parseEinsum(op, subscripts, shapes)
	if err != nil {
		return nil, err
	}
	p := &EinsumPlan{spec: sp, prepared: make([][]byte, len(shapes))}
	terms := make([]string, len(shapes))
	sets := make([]labelSet, len(shapes))
	var all labelSet
	labelCount, largest := 0, sp.setSize(setOf(sp.output))
	for i, s := range shapes {
		p.prepared[i], _, _ = sp.prepare(i, s)
		terms[i] = string(sp.inputs[i])
		sets[i] = setOf(p.prepared[i])
		all |= setOf(sp.inputs[i])
		labelCount += bits.OnesCount64(uint64(setOf(sp.inputs[i])))
		largest = max(largest, sp.setSize(setOf(sp.inputs[i])))
	}
	p.Subscripts = strings.Join(terms, ",") + "->" + string(sp.output)
	p.NaiveFLOPs = sp.flops(all, labelCount > bits.OnesCount64(uint64(all)), len(shapes))
	var path [][2]int
	if len(sets) <= 4 {
		path, _ = sp.optimalPath(sets)
	} else {
		var cost float64
		path, cost, _ = sp.greedyPath(sets, 0)
		if lp, lc, ok := sp.greedyPath(sets, largest); ok && lc < cost {
			path = lp
		}
	}
	labels := slices.Clone(p.prepared)
	out := setOf(sp.output)
	for _, ij := range path {
		i, j := ij[0], ij[1]
		keep := out
		for k, l := range labels {
			if k != i && k != j {
				keep |= setOf(l)
			}
		}
		la, lb := labels[i], labels[j]
		if len(labels) == 2 && !leftFirst(la, lb, sp.output) {
			la, lb = lb, la
		}
		_, _, batch, _, fa, fb := pairLabels(la, lb, keep)
		r := slices.Concat(batch, fa, fb)
		union := setOf(labels[i]) | setOf(labels[j])
		f := sp.flops(union, union&^keep != 0, 2)
		if len(labels) == 2 {
			r = sp.output
		}
		p.Steps = append(p.Steps, EinsumStep{Operands: []int{i, j},
			Subscripts: string(labels[i]) + "," + string(labels[j]) + "->" + string(r), FLOPs: f})
		largest = max(largest, sp.setSize(setOf(r)))
		labels = append(slices.Delete(slices.Delete(labels, j, j+1), i, i+1), r)
	}
	if len(path) == 0 {
		s := setOf(labels[0])
		f := sp.flops(s, s&^out != 0, 1)
		p.Steps = append(p.Steps, EinsumStep{Operands: []int{0}, Subscripts: string(labels[0]) + "->" + string(sp.output), FLOPs: f})
	}
	for _, st := range p.Steps {
		p.FLOPs += st.FLOPs
	}
	p.LargestIntermediate = int(min(largest, math.MaxInt))
	return p, nil
}

// String is a report in the form of numpy's einsum_path.
func (p *EinsumPlan) String() string {
	var b strings.Builder
	scaling := 0
	for _, st := range p.Steps {
		scaling = max(scaling, bits.OnesCount64(uint64(setOf([]byte(st.Subscripts)))))
	}
	naive := bits.OnesCount64(uint64(setOf([]byte(p.Subscripts))))
	speedup := math.NaN()
	if p.FLOPs > 0 {
		speedup = p.NaiveFLOPs / p.FLOPs
	}
	fmt.Fprintf(&b, "  Complete contraction:  %s\n", p.Subscripts)
	fmt.Fprintf(&b, "         Naive scaling:  %d\n", naive)
	fmt.Fprintf(&b, "     Optimized scaling:  %d\n", scaling)
	fmt.Fprintf(&b, "      Naive FLOP count:  %.3e\n", p.NaiveFLOPs)
	fmt.Fprintf(&b, "  Optimized FLOP count:  %.3e\n", p.FLOPs)
	fmt.Fprintf(&b, "   Theoretical speedup:  %.3f\n", speedup)
	fmt.Fprintf(&b, "  Largest intermediate:  %.3e elements\n", float64(p.LargestIntermediate))
	line := strings.Repeat("-", 74) + "\n"
	b.WriteString(line)
	fmt.Fprintf(&b, "%6s %24s %40s\n", "scaling", "current", "remaining")
	b.WriteString(line)
	remaining := make([]string, len(p.prepared))
	for i, l := range p.prepared {
		remaining[i] = string(l)
	}
	for _, st := range p.Steps {
		in, out, _ := strings.Cut(st.Subscripts, "->")
		for k := len(st.Operands) - 1; k >= 0; k-- {
			remaining = slices.Delete(remaining, st.Operands[k], st.Operands[k]+1)
		}
		remaining = append(remaining, out)
		sc := bits.OnesCount64(uint64(setOf([]byte(in))))
		fmt.Fprintf(&b, "%4d    %24s %40s\n", sc, st.Subscripts, strings.Join(remaining, ",")+"->"+string(p.spec.output))
	}
	return b.String()
}

// EinsumPath returns the plan Einsum follows for subscripts over operands
// of the given shapes: each operand is a shape ([]int) or an array (whose
// shape is used). Bad subscripts, shapes that do not fit them and
// operands of other types are an *array.Error naming EinsumPath.
func EinsumPath(subscripts string, operands ...any) (*EinsumPlan, error) {
	const op = "ops.EinsumPath"
	shapes := make([][]int, len(operands))
	for i, o := range operands {
		switch v := o.(type) {
		case []int:
			for _, d := range v {
				if d < 0 {
					return nil, array.Errorf(op, "operand %d: negative dimension in shape %v", i, v)
				}
			}
			shapes[i] = v
		case *array.Array:
			if v == nil {
				return nil, array.Errorf(op, "operand %d is nil", i)
			}
			shapes[i] = v.Shape()
		default:
			return nil, array.Errorf(op, "operand %d is a %T, not a shape ([]int) or *array.Array", i, o)
		}
	}
	return planEinsum(op, subscripts, shapes)
}

// Einsum evaluates the Einstein summation subscripts over operands with
// numpy's grammar: "ij,jk->ik" names the output's labels, "ij,jk" (no
// "->") outputs the labels that appear once, in alphabetical order
// (uppercase first); "..." stands for the leading axes an operand has
// beyond its labels, which broadcast against the other operands'; a
// label repeated within an operand takes its diagonal ("ii->i", or "ii"
// for the trace); labels not in the output are summed over. Size-1 axes
// broadcast against the label's size elsewhere.
//
// The operands' dtypes promote. They are contracted two at a time in the
// order EinsumPath returns (the cheapest for up to four operands, numpy's
// greedy order for more), each pair as one MatMul, batched over the labels
// both keep, after Transpose and Reshape (views where the layout allows);
// repeated labels are Diagonal views and labels of one operand alone are
// summed first. Derivatives and Vmap come from those ops.
func Einsum(subscripts string, operands ...*array.Array) *array.Array {
	const op = "ops.Einsum"
	requireNonNil(op, operands...)
	if len(operands) == 0 {
		array.Panicf(op, "subscripts %q: no operands", subscripts)
	}
	shapes := make([][]int, len(operands))
	dt := operands[0].DType()
	for i, x := range operands {
		shapes[i] = x.Shape()
		dt = array.Promote(dt, x.DType())
	}
	p, err := cachedPlan(op, subscripts, shapes)
	if err != nil {
		panic(err)
	}
	sp := &p.spec
	if _, pr := sizeProblem(outShape(sp), dt); pr != "" {
		array.Panicf(op, "subscripts %q with shapes %v give shape %v, which %s", subscripts, shapesText(shapes), outShape(sp), pr)
	}
	xs := make([]*array.Array, len(operands))
	labels := make([][]byte, len(operands))
	for i, x := range operands {
		x = AsType(x, dt)
		var diags [][2]int
		var squeeze []int
		labels[i], diags, squeeze = sp.prepare(i, shapes[i])
		for _, d := range diags {
			x = diagonal(x, 0, d[0], d[1])
		}
		if len(squeeze) > 0 {
			x = Squeeze(x, squeeze...)
		}
		xs[i] = x
	}
	out := setOf(sp.output)
	for _, st := range p.Steps {
		if len(st.Operands) == 1 {
			break
		}
		i, j := st.Operands[0], st.Operands[1]
		keep := out
		for k, l := range labels {
			if k != i && k != j {
				keep |= setOf(l)
			}
		}
		l, r := i, j
		if len(labels) == 2 && !leftFirst(labels[i], labels[j], sp.output) {
			l, r = j, i
		}
		res, rl := sp.contractPair(xs[l], labels[l], xs[r], labels[r], keep)
		xs = append(slices.Delete(slices.Delete(xs, j, j+1), i, i+1), res)
		labels = append(slices.Delete(slices.Delete(labels, j, j+1), i, i+1), rl)
	}
	var rest []byte
	for _, c := range labels[0] {
		if out&labelBit(c) == 0 {
			rest = append(rest, c)
		}
	}
	x, l := sumLabels(xs[0], labels[0], rest)
	return applyPerm(x, labelPerm(l, sp.output))
}

// einsumPlans keeps the plans Einsum made, by subscripts and shapes: a
// training step calls the same Einsum every time, and planning (parsing,
// and trying every order for up to four operands) costs several times the
// graph it builds for small operands. The plans are only read once made.
// At einsumPlanMax entries the cache starts again, which bounds it
// without the bookkeeping of an LRU.
var einsumPlans = struct {
	sync.Mutex
	m map[string]*EinsumPlan
}{m: map[string]*EinsumPlan{}}

const einsumPlanMax = 256

// cachedPlan is planEinsum through einsumPlans. Errors are not kept: they
// name the op that asked.
func cachedPlan(op, subscripts string, shapes [][]int) (*EinsumPlan, error) {
	var b strings.Builder
	b.WriteString(subscripts)
	for _, s := range shapes {
		b.WriteByte('|')
		for _, d := range s {
			b.WriteString(strconv.Itoa(d))
			b.WriteByte(',')
		}
	}
	key := b.String()
	einsumPlans.Lock()
	p, ok := einsumPlans.m[key]
	einsumPlans.Unlock()
	if ok {
		return p, nil
	}
	p, err := planEinsum(op, subscripts, shapes)
	if err != nil {
		return nil, err
	}
	einsumPlans.Lock()
	if len(einsumPlans.m) >= einsumPlanMax {
		clear(einsumPlans.m)
	}
	einsumPlans.m[key] = p
	einsumPlans.Unlock()
	return p, nil
}

// outShape is the shape of the result of sp.
func outShape(sp *einsumSpec) []int {
	s := make([]int, len(sp.output))
	for i, c := range sp.output {
		s[i] = sp.sizeOf(c)
	}
	return s
}

// contractPair contracts a and b, with labels la and lb, over the labels
// keep does not hold, as one MatMul of [batch, freeA, inner] by [batch,
// inner, freeB] (each side read transposed where that is its order
// already, which MatMul takes in place). It returns the result and its
// labels: batch, freeA, freeB.
func (sp *einsumSpec) contractPair(a *array.Array, la []byte, b *array.Array, lb []byte, keep labelSet) (*array.Array, []byte) {
	sumA, sumB, batch, inner, freeA, freeB := pairLabels(la, lb, keep)
	a, la = sumLabels(a, la, sumA)
	b, lb = sumLabels(b, lb, sumB)
	sizes := func(ls []byte) ([]int, int) {
		s := make([]int, len(ls))
		for i, c := range ls {
			s[i] = sp.sizeOf(c)
		}
		// An empty operand's other axes may multiply past an int; it
		// is empty whatever stands in for their product.
		n, p := elemsProblem(s)
		if p != "" {
			n = 0
		}
		return s, n
	}
	bs, nb := sizes(batch)
	fas, nfa := sizes(freeA)
	fbs, nfb := sizes(freeB)
	_, nk := sizes(inner)
	// matrix lays x out as a stack of matrices, [batch, free, inner] for
	// the left operand and [batch, inner, free] for the right one. Where
	// x has its labels the other way round, it is read as the transpose
	// of that order, which MatMul takes in place.
	matrix := func(x *array.Array, lx, free []byte, nf int, left bool) *array.Array {
		innerFirst := len(inner) > 0 && len(free) > 0 && slices.Index(lx, inner[0]) < slices.Index(lx, free[0])
		freeFirst := len(inner) > 0 && len(free) > 0 && !innerFirst
		transposed := left && innerFirst || !left && freeFirst
		var lead []int
		if len(batch) > 0 {
			lead = []int{nb}
		}
		var m *array.Array
		if left != transposed {
			m = Reshape(applyPerm(x, labelPerm(lx, slices.Concat(batch, free, inner))), append(lead, nf, nk)...)
		} else {
			m = Reshape(applyPerm(x, labelPerm(lx, slices.Concat(batch, inner, free))), append(lead, nk, nf)...)
		}
		if transposed {
			m = matT(m)
		}
		return m
	}
	am := matrix(a, la, freeA, nfa, true)
	bm := matrix(b, lb, freeB, nfb, false)
	r := MatMul(am, bm)
	return Reshape(r, slices.Concat(bs, fas, fbs)...), slices.Concat(batch, freeA, freeB)
}

// sumLabels sums x over the axes of labels sum and drops them from lx.
func sumLabels(x *array.Array, lx, sum []byte) (*array.Array, []byte) {
	if len(sum) == 0 {
		return x, lx
	}
	axes := make([]int, len(sum))
	for i, c := range sum {
		axes[i] = slices.Index(lx, c)
	}
	s := setOf(sum)
	return Sum(x, axes...), slices.DeleteFunc(slices.Clone(lx), func(c byte) bool { return s&labelBit(c) != 0 })
}

// labelPerm is the permutation that takes an array with labels from to
// one with labels to (the same labels).
func labelPerm(from, to []byte) []int {
	perm := make([]int, len(to))
	for i, c := range to {
		perm[i] = slices.Index(from, c)
	}
	return perm
}
