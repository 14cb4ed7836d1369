package optim

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/encoding/safetensors"
)

// formatKey and formatValue mark a safetensors file as optimiser state,
// so that Load refuses a model's weights given by mistake.
const (
	formatKey   = "format"
	formatValue = "fathom.optim"
)

// Save writes the optimiser's state to path in safetensors, under the
// names State gives ("step", "learning_rate", "m.layers.0.weight", ...).
// It evaluates the state first, and replaces the file atomically: a
// failure part-way leaves the previous checkpoint whole.
func Save(path string, opt Optimizer) error {
	if opt == nil {
		return array.Errorf("optim.Save", "nil optimiser")
	}
	return safetensors.Save(path, opt.State(), map[string]string{formatKey: formatValue})
}

// Load reads a state that Save wrote into opt (SetState). It fails, and
// leaves opt as it was, when the file is not optimiser state or holds
// entries opt does not keep (the state of another kind of optimiser).
func Load(path string, opt Optimizer) error {
	const op = "optim.Load"
	if opt == nil {
		return array.Errorf(op, "nil optimiser")
	}
	state, meta, err := safetensors.Load(path)
	if err != nil {
		return err
	}
	if meta[formatKey] != formatValue {
		return array.Errorf(op, "%s holds no optimiser state (no %s=%s in its metadata)", path, formatKey, formatValue)
	}
	return opt.SetState(state)
}
