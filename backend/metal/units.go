package metal

import (
	"fmt"
	"strings"
	"sync"

	"github.com/fathom-go/fathom/array"
)

// Libraries are compiled lazily, a unit at a time. A unit of an embedded
// library is one of its top-level instantiation lines, such as
// `instantiate_binary_real(Add)` (every dtype and variant of Add) or
// `instantiate_kernel("argmax_float32", arg_reduce, float, float, ArgMax)`,
// compiled with the library's templates and helpers but none of its other
// instantiations. The first use of a kernel compiles its unit only: a few
// kernels, where the whole of binary.metal is hundreds. The unit's source
// is the library's with the other instantiation lines blanked, so compiler
// messages keep the file's line numbers.
//
// Finding the unit of a kernel by its host name takes the instantiation
// macros of the file apart: kernelUnits expands each top-level line
// through the file's function-like #defines down to instantiate_kernel
// and reads the host names, string literals that may be pasted from
// stringified macro arguments. TestLibraryUnits checks the result against
// the kernels the harness compiles from the whole library.

// libUnits is the split of one embedded library.
type libUnits struct {
	lines  []string       // the file, by line
	insts  []int          // indices of its top-level instantiation lines
	unitOf map[string]int // kernel host name -> index into insts
}

var (
	unitsMu    sync.Mutex
	unitsCache = map[string]*libUnits{}
)

// unitsOf returns the split of embedded library name.
func unitsOf(name string) (*libUnits, error) {
	unitsMu.Lock()
	defer unitsMu.Unlock()
	if u, ok := unitsCache[name]; ok {
		return u, nil
	}
	body, err := kernelFS.ReadFile("kernels/" + name)
	if err != nil {
		return nil, array.Errorf("metal.Run", "no embedded library %q", name)
	}
	u, err := splitUnits(name, string(body))
	if err != nil {
		return nil, err
	}
	unitsCache[name] = u
	return u, nil
}

// libraryUnit returns the unit of embedded library lib that holds kernel:
// its name ("binary.metal[instantiate_binary_real(Add)]", the library
// name the host caches it under) and its source, prelude included.
func libraryUnit(lib, kernel string) (name, source string, err error) {
	u, err := unitsOf(lib)
	if err != nil {
		return "", "", err
	}
	i, ok := u.unitOf[kernel]
	if !ok {
		return "", "", array.Errorf("metal.Run", "library %s has no kernel %q", lib, kernel)
	}
	return lib + "[" + strings.TrimSpace(u.lines[u.insts[i]]) + "]", u.source(lib, i), nil
}

// source is the unit's MSL: the prelude and the file with every
// instantiation line but the unit's blanked.
func (u *libUnits) source(lib string, unit int) string {
	var b strings.Builder
	keep := u.insts[unit]
	skip := map[int]bool{}
	for _, l := range u.insts {
		skip[l] = l != keep
	}
	for i, line := range u.lines {
		if !skip[i] {
			b.WriteString(line)
		}
		b.WriteByte('\n')
	}
	_, pre := libraries()
	return withPrelude(pre, lib, b.String())
}

// units returns the number of units of the library.
func (u *libUnits) units() int { return len(u.insts) }

// splitUnits finds the top-level instantiation lines of a library body
// and the host names each one instantiates.
func splitUnits(name, body string) (*libUnits, error) {
	u := &libUnits{lines: strings.Split(strings.TrimSuffix(body, "\n"), "\n"), unitOf: map[string]int{}}
	macros := map[string]macro{}
	for i := 0; i < len(u.lines); i++ {
		line := u.lines[i]
		if strings.HasPrefix(line, "#define ") {
			def := line
			for strings.HasSuffix(strings.TrimRight(def, " \t"), "\\") && i+1 < len(u.lines) {
				def = strings.TrimSuffix(strings.TrimRight(def, " \t"), "\\") + " "
				i++
				def += u.lines[i]
			}
			if m, ok := parseMacro(strings.TrimPrefix(def, "#define ")); ok {
				macros[m.name] = m
			}
			continue
		}
		// A top-level call of instantiate_kernel, register_kernel, an
		// instantiate_* macro or any function-like macro of the file
		// (kernel code is indented or starts with a keyword, never with a
		// macro call at column 0).
		open := strings.IndexByte(line, '(')
		if open <= 0 || !identOnly(line[:open]) {
			continue
		}
		fn := line[:open]
		if _, ok := macros[fn]; !ok && !strings.HasPrefix(fn, "instantiate_") && fn != "register_kernel" {
			continue
		}
		names, err := expandHostNames(strings.TrimSpace(line), macros, 0)
		if err != nil {
			return nil, array.Errorf("metal.Run", "%s:%d: %v", name, i+1, err)
		}
		for _, n := range names {
			if _, dup := u.unitOf[n]; dup {
				return nil, array.Errorf("metal.Run", "%s:%d: kernel %q instantiated twice", name, i+1, n)
			}
			u.unitOf[n] = len(u.insts)
		}
		u.insts = append(u.insts, i)
	}
	return u, nil
}

// macro is a function-like #define.
type macro struct {
	name   string
	params []string
	body   string
}

func parseMacro(def string) (macro, bool) {
	open := strings.IndexByte(def, '(')
	if open < 0 || strings.ContainsAny(def[:open], " \t") {
		return macro{}, false // object-like
	}
	end := strings.IndexByte(def, ')')
	if end < open {
		return macro{}, false
	}
	var params []string
	for _, p := range strings.Split(def[open+1:end], ",") {
		if p = strings.TrimSpace(p); p != "" {
			params = append(params, p)
		}
	}
	return macro{name: def[:open], params: params, body: strings.TrimSpace(def[end+1:])}, true
}

// expandHostNames expands a sequence of macro invocations (a top-level
// line, or a macro's body after substitution) and returns the host names
// of the instantiate_kernel calls it reaches.
func expandHostNames(text string, macros map[string]macro, depth int) ([]string, error) {
	if depth > 16 {
		return nil, fmt.Errorf("macros nest too deep")
	}
	var names []string
	for text = strings.TrimSpace(text); text != ""; text = strings.TrimSpace(text) {
		open := strings.IndexByte(text, '(')
		if open < 0 {
			return nil, fmt.Errorf("expected a macro call in %q", text)
		}
		fn := strings.TrimSpace(text[:open])
		args, rest, err := splitArgs(text[open:])
		if err != nil {
			return nil, err
		}
		text = rest
		if fn == "register_kernel" && len(args) == 1 {
			// A plain kernel: its code is in every unit, and this line
			// names it (the harness lists it by this macro).
			names = append(names, args[0])
			continue
		}
		if fn == "instantiate_kernel" {
			if len(args) < 2 {
				return nil, fmt.Errorf("instantiate_kernel with %d arguments", len(args))
			}
			n, err := stringLiteral(args[0])
			if err != nil {
				return nil, err
			}
			names = append(names, n)
			continue
		}
		m, ok := macros[fn]
		if !ok {
			return nil, fmt.Errorf("unknown macro %s", fn)
		}
		if len(args) != len(m.params) {
			return nil, fmt.Errorf("%s takes %d arguments, given %d", fn, len(m.params), len(args))
		}
		sub, err := expandHostNames(substitute(m, args), macros, depth+1)
		if err != nil {
			return nil, err
		}
		names = append(names, sub...)
	}
	return names, nil
}

// splitArgs splits "(a, (b, c), d) rest" into its top-level arguments
// and what follows the closing parenthesis.
func splitArgs(s string) (args []string, rest string, err error) {
	depth, start, inStr := 0, 1, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inStr:
			if c == '\\' {
				i++
			} else if c == '"' {
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth == 0 {
				args = append(args, strings.TrimSpace(s[start:i]))
				return args, s[i+1:], nil
			}
		case c == ',' && depth == 1:
			args = append(args, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	return nil, "", fmt.Errorf("unbalanced parentheses in %q", s)
}

// substitute replaces m's parameters in its body by args, and #param by
// the argument as a string literal.
func substitute(m macro, args []string) string {
	val := map[string]string{}
	for i, p := range m.params {
		val[p] = args[i]
	}
	var b strings.Builder
	s := m.body
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			b.WriteString(s[i:min(j+1, len(s))])
			i = j + 1
		case c == '#' && i+1 < len(s) && isIdent(s[i+1]):
			j := i + 1
			for j < len(s) && isIdent(s[j]) {
				j++
			}
			if v, ok := val[s[i+1:j]]; ok {
				b.WriteString(`"` + v + `"`)
			} else {
				b.WriteString(s[i:j])
			}
			i = j
		case isIdent(c):
			j := i
			for j < len(s) && isIdent(s[j]) {
				j++
			}
			if v, ok := val[s[i:j]]; ok {
				b.WriteString(v)
			} else {
				b.WriteString(s[i:j])
			}
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

func identOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isIdent(s[i]) {
			return false
		}
	}
	return s != ""
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// stringLiteral joins adjacent string literals ("a" "b" -> ab).
func stringLiteral(s string) (string, error) {
	var b strings.Builder
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		if s[0] != '"' {
			return "", fmt.Errorf("host name %q is not a string literal", s)
		}
		j := 1
		for j < len(s) && s[j] != '"' {
			if s[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(s) {
			return "", fmt.Errorf("unterminated string in %q", s)
		}
		b.WriteString(s[1:j])
		s = s[j+1:]
	}
	return b.String(), nil
}
