package optim

import (
	"math"
	"testing"
)

// This file restates each optimiser's published update rule in plain Go,
// one float64 element at a time, as an independent check of the array
// code (the papers' and PyTorch's documented algorithms; Lion and Adam
// without bias correction as MLX documents them).

// cfg reads a case's field, or def when the case leaves it unset.
func cfg(c *refCase, name string, def float64) float64 {
	if v, ok := c.Fields[name]; ok {
		if b, ok := v.(bool); ok {
			if b {
				return 1
			}
			return 0
		}
		return v.(float64)
	}
	return def
}

// closedLR is the learning rate of update k (0 for the first).
func closedLR(c *refCase, k int) float64 {
	s := c.Schedule
	if s == nil {
		return c.LR
	}
	switch s.Kind {
	case "step_decay":
		return s.Init * math.Pow(s.Rate, math.Floor(float64(k)/float64(s.StepSize)))
	case "cosine_decay":
		x := math.Min(float64(k), float64(s.DecaySteps))
		return s.End + (s.Init-s.End)*(1+math.Cos(math.Pi*x/float64(s.DecaySteps)))/2
	}
	panic("closedLR: " + s.Kind)
}

// closedForm returns a case's parameters after each of its first n
// updates.
func closedForm(c *refCase, n int) []map[string][]float64 {
	p := map[string][]float64{}
	for k, v := range c.Params {
		p[k] = append([]float64(nil), v.Data...)
	}
	st := map[string][]float64{} // slot + "." + name
	slot := func(s, name string, init float64) []float64 {
		key := s + "." + name
		if _, ok := st[key]; !ok {
			v := make([]float64, len(p[name]))
			for i := range v {
				v[i] = init
			}
			st[key] = v
		}
		return st[key]
	}
	var out []map[string][]float64
	for k := 0; k < n; k++ {
		lr := closedLR(c, k)
		t := float64(k + 1)
		for name, gr := range c.Grads[k] {
			gs, w := gr.Data, p[name]
			switch c.Optimizer {
			case "SGD":
				mom, damp, wd := cfg(c, "Momentum", 0), cfg(c, "Dampening", 0), cfg(c, "WeightDecay", 0)
				nest := cfg(c, "Nesterov", 0) == 1
				var buf []float64
				if mom != 0 {
					buf = slot("v", name, 0)
				}
				for i := range w {
					g := gs[i] + wd*w[i]
					if mom != 0 {
						if k == 0 {
							buf[i] = g
						} else {
							buf[i] = mom*buf[i] + (1-damp)*g
						}
						if nest {
							g += mom * buf[i]
						} else {
							g = buf[i]
						}
					}
					w[i] -= lr * g
				}
			case "Adam", "AdamW":
				b1, b2, eps := cfg(c, "Beta1", 0.9), cfg(c, "Beta2", 0.999), cfg(c, "Eps", 1e-8)
				wdDef := 0.0
				if c.Optimizer == "AdamW" {
					wdDef = 0.01
				}
				wd, noBias := cfg(c, "WeightDecay", wdDef), cfg(c, "NoBiasCorrection", 0) == 1
				m, v := slot("m", name, 0), slot("v", name, 0)
				for i := range w {
					g := gs[i]
					if c.Optimizer == "AdamW" {
						w[i] *= 1 - lr*wd
					} else {
						g += wd * w[i]
					}
					m[i] = b1*m[i] + (1-b1)*g
					v[i] = b2*v[i] + (1-b2)*g*g
					if noBias {
						w[i] -= lr * m[i] / (math.Sqrt(v[i]) + eps)
					} else {
						mh := m[i] / (1 - math.Pow(b1, t))
						vh := v[i] / (1 - math.Pow(b2, t))
						w[i] -= lr * mh / (math.Sqrt(vh) + eps)
					}
				}
			case "Adamax":
				b1, b2, eps, wd := cfg(c, "Beta1", 0.9), cfg(c, "Beta2", 0.999), cfg(c, "Eps", 1e-8), cfg(c, "WeightDecay", 0)
				m, u := slot("m", name, 0), slot("v", name, 0)
				for i := range w {
					g := gs[i] + wd*w[i]
					m[i] = b1*m[i] + (1-b1)*g
					u[i] = math.Max(b2*u[i], math.Abs(g)+eps)
					w[i] -= lr / (1 - math.Pow(b1, t)) * m[i] / u[i]
				}
			case "RMSProp":
				a, eps, mom, wd := cfg(c, "Alpha", 0.99), cfg(c, "Eps", 1e-8), cfg(c, "Momentum", 0), cfg(c, "WeightDecay", 0)
				centered := cfg(c, "Centered", 0) == 1
				v, gm, b := slot("v", name, 0), slot("g", name, 0), slot("b", name, 0)
				for i := range w {
					g := gs[i] + wd*w[i]
					v[i] = a*v[i] + (1-a)*g*g
					d := math.Sqrt(v[i]) + eps
					if centered {
						gm[i] = a*gm[i] + (1-a)*g
						d = math.Sqrt(v[i]-gm[i]*gm[i]) + eps
					}
					if mom != 0 {
						b[i] = mom*b[i] + g/d
						w[i] -= lr * b[i]
					} else {
						w[i] -= lr * g / d
					}
				}
			case "Adagrad":
				eps, decay, init, wd := cfg(c, "Eps", 1e-10), cfg(c, "LRDecay", 0), cfg(c, "InitialAccumulator", 0), cfg(c, "WeightDecay", 0)
				v := slot("v", name, init)
				for i := range w {
					g := gs[i] + wd*w[i]
					v[i] += g * g
					w[i] -= lr / (1 + (t-1)*decay) * g / (math.Sqrt(v[i]) + eps)
				}
			case "AdaDelta":
				rho, eps, wd := cfg(c, "Rho", 0.9), cfg(c, "Eps", 1e-6), cfg(c, "WeightDecay", 0)
				v, u := slot("v", name, 0), slot("u", name, 0)
				for i := range w {
					g := gs[i] + wd*w[i]
					v[i] = rho*v[i] + (1-rho)*g*g
					d := math.Sqrt(u[i]+eps) / math.Sqrt(v[i]+eps) * g
					u[i] = rho*u[i] + (1-rho)*d*d
					w[i] -= lr * d
				}
			case "Lion":
				b1, b2, wd := cfg(c, "Beta1", 0.9), cfg(c, "Beta2", 0.99), cfg(c, "WeightDecay", 0)
				m := slot("m", name, 0)
				for i := range w {
					dir := b1*m[i] + (1-b1)*gs[i]
					m[i] = b2*m[i] + (1-b2)*gs[i]
					w[i] = w[i]*(1-lr*wd) - lr*sign(dir)
				}
			default:
				panic("closedForm: " + c.Optimizer)
			}
		}
		snap := map[string][]float64{}
		for name, v := range p {
			snap[name] = append([]float64(nil), v...)
		}
		out = append(out, snap)
	}
	return out
}

func sign(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

// TestFirstStepsMatchTheClosedForm checks the first three updates of every
// float64 case against the published rules written out above.
func TestFirstStepsMatchTheClosedForm(t *testing.T) {
	for i := range ref(t).Cases {
		c := &ref(t).Cases[i]
		if c.DType != "float64" {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			const n = 3
			want := closedForm(c, n)
			opt := c.optimizer(t)
			params := c.Params.arrays(t)
			for k := 0; k < n; k++ {
				params = opt.Update(params, c.Grads[k].arrays(t))
				for name, p := range params {
					if err := closeTo(values(t, p), want[k][name], 1e-13); err != nil {
						t.Fatalf("step %d, %s: %v", k+1, name, err)
					}
				}
			}
		})
	}
}
