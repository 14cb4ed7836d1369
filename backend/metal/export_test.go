package metal

// SetMaxGridDim lowers the largest grid dimension plans use, so tests reach
// the 2-D grids of arrays with more than 2^32 elements; it returns a
// function that restores the limit.
func SetMaxGridDim(n int) (restore func()) {
	old := maxGridDim.Swap(int64(n))
	return func() { maxGridDim.Store(old) }
}

// Libraries and LibrarySource give the tests of package metal_test the
// embedded libraries, which the harness runs from their sources.
var (
	Libraries     = libraryNames
	LibrarySource = librarySource
)

// FitLaunch is fitLaunch: the conformance suite fits launches to the
// harness's pipeline limits as the host does.
var FitLaunch = fitLaunch

// Unit is a unit of an embedded library (see units.go).
type Unit struct {
	Name, Source string
	Kernels      []string
}

// LibraryUnits returns the units of embedded library lib, in file order.
func LibraryUnits(lib string) ([]Unit, error) {
	u, err := unitsOf(lib)
	if err != nil {
		return nil, err
	}
	units := make([]Unit, u.units())
	for k, i := range u.unitOf {
		units[i].Kernels = append(units[i].Kernels, k)
	}
	for i := range units {
		first := units[i].Kernels[0]
		name, src, err := libraryUnit(lib, first)
		if err != nil {
			return nil, err
		}
		units[i].Name, units[i].Source = name, src
	}
	return units, nil
}

// SplitUnits splits a library body into units and returns each unit's
// kernels, for tests of the macro expansion on bad input.
func SplitUnits(name, body string) ([][]string, error) {
	u, err := splitUnits(name, body)
	if err != nil {
		return nil, err
	}
	out := make([][]string, u.units())
	for k, i := range u.unitOf {
		out[i] = append(out[i], k)
	}
	return out, nil
}
