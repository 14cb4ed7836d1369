package mslcpu

// lint.go: Lint, a static check of MSL libraries against rules of the
// Metal Shading Language specification that compiling MSL as C++ (the
// harness) does not see. Apple's compiler builds a library as one unit, so
// one kernel that breaks a rule takes down every kernel of its library on
// a Mac; here the harness refuses the library (Prepare, Run) and
// backend/metal's tests lint every embedded library.

import (
	"fmt"
	"sort"
	"strings"
)

// LintRules describes the rules Lint enforces, by the Rule of a Finding.
var LintRules = map[string]string{
	"attr-components":    "the position and size attributes of a kernel (thread_position_in_grid, threads_per_grid, thread_position_in_threadgroup, threads_per_threadgroup, dispatch_threads_per_threadgroup, threadgroup_position_in_grid, threadgroups_per_grid) agree in component count",
	"attr-pair-type":     "thread_position_in_grid and threads_per_grid; thread_position_in_threadgroup, threads_per_threadgroup and dispatch_threads_per_threadgroup; threadgroup_position_in_grid and threadgroups_per_grid: each group has one type",
	"attr-type":          "a position or size attribute is ushort, uint or a 2- or 3-component vector of them",
	"attr-scalar":        "thread_index_in_threadgroup and the simdgroup and quadgroup indices and counts are scalar ushort or uint",
	"attr-unknown":       "every kernel parameter has one known attribute: [[buffer(n)]], [[threadgroup(n)]] or a built-in",
	"buffers":            "at most 31 buffer arguments, indices 0 to 30, each used once",
	"threadgroup-memory": "the threadgroup memory of each instantiation of a kernel is at most 32 KB (each variable rounded up to 16 bytes)",
	"max-threads":        "[[max_total_threads_per_threadgroup(N)]] has 1 <= N <= 1024",
	"kernel-return":      "a kernel returns void",
	"host-name":          "each kernel's host name is unique in its library, and every instantiation names a function of the library with the right number of template arguments",
	"double":             "no double: Metal has no 64-bit floating point",
	"recursion":          "no function calls itself, directly or through others",
	"vla":                "array sizes are constant expressions (no variable-length arrays)",
	"parse":              "the library is well formed enough to check",
}

// maxThreadgroupMemory is what every Apple GPU offers a threadgroup.
const maxThreadgroupMemory = 32 << 10

// Finding is one rule a library breaks.
type Finding struct {
	Rule   string // a key of LintRules
	Pos    string // file:line
	Kernel string // the kernel (host name) or function concerned, if any
	Msg    string
}

func (f Finding) String() string {
	k := ""
	if f.Kernel != "" {
		k = f.Kernel + ": "
	}
	return fmt.Sprintf("%s: %s%s [%s]", f.Pos, k, f.Msg, f.Rule)
}

// KernelInfo is one kernel of a library, as Metal exposes it.
type KernelInfo struct {
	Name             string // host name
	Function         string
	MaxThreads       int   // [[max_total_threads_per_threadgroup]], 0 if not declared
	ThreadgroupBytes int   // static threadgroup memory (16-byte rounded)
	Buffers          []int // [[buffer(n)]] indices
}

// LintReport is the result of Lint.
type LintReport struct {
	Library  string
	Kernels  []KernelInfo
	Findings []Finding
}

// Err returns nil if the library passed, else an error listing the
// findings (at most 30).
func (r *LintReport) Err() error {
	if len(r.Findings) == 0 {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "mslcpu: %s would not compile on Metal (%d finding(s) of the MSL lint):", r.Library, len(r.Findings))
	for i, f := range r.Findings {
		if i == 30 {
			fmt.Fprintf(&b, "\n\t...")
			break
		}
		fmt.Fprintf(&b, "\n\t%s", f)
	}
	return fmt.Errorf("%s", b.String())
}

// Lint checks lib's source, as Metal compiles it (the prelude's
// instantiate_kernel is Metal's explicit instantiation; the harness's
// macros are not defined), against the rules of LintRules.
func Lint(lib Library) *LintReport {
	l := &linter{
		byName: map[string][]*fnDef{}, structs: map[string]bool{}, typedefs: map[string][]tok{},
		consts: map[string][]tok{}, seen: map[string]int{},
	}
	ts, errs := preprocess(lib.Source, lib.Name)
	for _, e := range errs {
		l.add(Finding{Rule: "parse", Pos: lib.Name, Msg: e})
	}
	for _, t := range ts {
		if t.is("double") {
			l.add(Finding{Rule: "double", Pos: t.pos(), Msg: "double: Metal has no 64-bit floating point (use float)"})
		}
	}
	l.parseScope(ts, "", nil)
	for _, f := range l.fns {
		l.byName[f.name] = append(l.byName[f.name], f)
	}
	l.callGraph()
	l.recursion()
	for _, f := range l.fns {
		l.vla(f)
	}
	l.kernels()
	sort.SliceStable(l.findings, func(i, j int) bool { return l.findings[i].Pos < l.findings[j].Pos })
	return &LintReport{Library: lib.Name, Kernels: l.infos, Findings: l.findings}
}

type tparam struct {
	name string
	typ  bool // typename/class, else a non-type parameter
}

type fnDef struct {
	name         string
	owner        string   // struct of a member function
	tparams      []tparam // own template parameters
	otparams     []tparam // the owner's
	params       [][]tok
	nreq, nparam int
	body         []tok
	at           tok
	kernel       bool
	maxThreads   []tok
	ret          []tok
	calls        []*fnDef
}

type instance struct {
	host string
	fn   string
	args [][]tok
	at   tok
}

type linter struct {
	fns      []*fnDef
	byName   map[string][]*fnDef
	structs  map[string]bool
	typedefs map[string][]tok
	consts   map[string][]tok
	insts    []instance
	infos    []KernelInfo
	findings []Finding
	seen     map[string]int // finding key -> index, for deduplication
}

func (l *linter) add(f Finding) {
	key := f.Rule + "\x00" + f.Pos + "\x00" + f.Msg
	if i, ok := l.seen[key]; ok {
		// The same finding in other instantiations of one kernel.
		if f.Kernel != "" && !strings.HasSuffix(l.findings[i].Kernel, " (and others)") {
			l.findings[i].Kernel += " (and others)"
		}
		return
	}
	l.seen[key] = len(l.findings)
	l.findings = append(l.findings, f)
}

// matchClose returns the index of the bracket closing ts[i] ((, [ or {),
// or -1.
func matchClose(ts []tok, i int) int {
	depth := 0
	for j := i; j < len(ts); j++ {
		switch {
		case ts[j].is("(") || ts[j].is("[") || ts[j].is("{"):
			depth++
		case ts[j].is(")") || ts[j].is("]") || ts[j].is("}"):
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// matchAngle returns the index of the > closing the < at ts[i], or -1 if
// ts[i:] does not look like a template argument list.
func matchAngle(ts []tok, i int) int {
	depth := 0
	for j := i; j < len(ts); j++ {
		t := ts[j]
		switch {
		case t.is("<"):
			depth++
		case t.is(">"):
			depth--
		case t.is(">>"):
			depth -= 2
		case t.is("(") || t.is("["):
			k := matchClose(ts, j)
			if k < 0 {
				return -1
			}
			j = k
		case t.is(";") || t.is("{") || t.is("}") || t.is(")") || t.is("]") || t.is("&&") || t.is("||"):
			return -1
		}
		if depth <= 0 {
			if depth < 0 {
				return -1
			}
			return j
		}
	}
	return -1
}

// splitTop splits ts at commas outside brackets (angle brackets too).
func splitTop(ts []tok) [][]tok {
	if len(ts) == 0 {
		return nil
	}
	var out [][]tok
	depth, start := 0, 0
	for i, t := range ts {
		switch {
		case t.is("(") || t.is("[") || t.is("{") || t.is("<"):
			depth++
		case t.is(")") || t.is("]") || t.is("}") || t.is(">"):
			depth--
		case t.is(">>"):
			depth -= 2
		case t.is(",") && depth == 0:
			out = append(out, ts[start:i])
			start = i + 1
		}
	}
	return append(out, ts[start:])
}

// attr is one attribute of a [[...]] list.
type attr struct {
	name string
	args []tok
	at   tok
}

// takeAttrs removes the [[...]] lists from ts (outside parentheses) and
// returns them.
func takeAttrs(ts []tok) (rest []tok, attrs []attr) {
	for i := 0; i < len(ts); i++ {
		if ts[i].is("(") {
			if j := matchClose(ts, i); j > 0 {
				rest = append(rest, ts[i:j+1]...)
				i = j
				continue
			}
		}
		if ts[i].is("[") && i+1 < len(ts) && ts[i+1].is("[") {
			j := matchClose(ts, i+1)
			if j < 0 || j+1 >= len(ts) || !ts[j+1].is("]") {
				rest = append(rest, ts[i])
				continue
			}
			for _, a := range splitTop(ts[i+2 : j]) {
				if len(a) == 0 {
					continue
				}
				at := attr{name: a[0].text, at: a[0]}
				if len(a) > 1 && a[1].is("(") {
					if k := matchClose(a, 1); k > 0 {
						at.args = a[2:k]
					}
				}
				attrs = append(attrs, at)
			}
			i = j + 1
			continue
		}
		rest = append(rest, ts[i])
	}
	return rest, attrs
}

// templateHeader parses `template <...>` at ts[0] and returns its
// parameters and the tokens after it.
func templateHeader(ts []tok) ([]tparam, []tok, bool) {
	if len(ts) < 2 || !ts[0].is("template") || !ts[1].is("<") {
		return nil, ts, false
	}
	j := matchAngle(ts, 1)
	if j < 0 {
		return nil, ts, false
	}
	var ps []tparam
	for _, p := range splitTop(ts[2:j]) {
		if len(p) == 0 {
			continue
		}
		if k := indexOf(p, "="); k >= 0 {
			p = p[:k]
		}
		name := ""
		for _, t := range p {
			if t.kind == 'i' {
				name = t.text
			}
		}
		ps = append(ps, tparam{name: name, typ: p[0].is("typename") || p[0].is("class")})
	}
	return ps, ts[j+1:], true
}

func indexOf(ts []tok, s string) int {
	depth := 0
	for i, t := range ts {
		switch {
		case t.is("(") || t.is("[") || t.is("{") || t.is("<"):
			depth++
		case t.is(")") || t.is("]") || t.is("}") || t.is(">"):
			depth--
		case depth == 0 && t.is(s):
			return i
		}
	}
	return -1
}

func (l *linter) parseErr(at tok, msg string) {
	l.add(Finding{Rule: "parse", Pos: at.pos(), Msg: msg})
}

// parseScope walks the declarations of a namespace or struct body.
func (l *linter) parseScope(ts []tok, owner string, otp []tparam) {
	var head []tok
	skip := false // after a struct or enum body: its declarators, up to ;
	for i := 0; i < len(ts); i++ {
		t := ts[i]
		if len(head) == 0 && (t.is("instantiate_kernel") || t.is("register_kernel")) && i+1 < len(ts) && ts[i+1].is("(") {
			j := matchClose(ts, i+1)
			if j < 0 {
				l.parseErr(t, "unbalanced "+t.text)
				return
			}
			l.rawInstance(t, ts[i+2:j])
			i = j
			if i+1 < len(ts) && ts[i+1].is(";") {
				i++
			}
			continue
		}
		switch {
		case t.is(";"):
			if !skip {
				l.declaration(head)
			}
			head, skip = nil, false
		case t.is("{"):
			j := matchClose(ts, i)
			if j < 0 {
				l.parseErr(t, "unbalanced {")
				return
			}
			inner := ts[i+1 : j]
			switch kind, name, tps := classify(head); kind {
			case "namespace":
				l.parseScope(inner, owner, otp)
				head = nil
			case "struct":
				l.structs[name] = true
				l.parseScope(inner, name, append(append([]tparam{}, otp...), tps...))
				head, skip = nil, true
			case "enum":
				l.enum(inner)
				head, skip = nil, true
			case "function":
				l.function(head, inner, owner, otp)
				head = nil
			default: // an initializer
				head = append(head, t, ts[j])
			}
			i = j
		case t.is(":") && len(head) == 1 && (head[0].is("public") || head[0].is("private") || head[0].is("protected")):
			head = nil
		default:
			head = append(head, t)
		}
	}
	if len(head) > 0 && !skip {
		l.parseErr(head[0], "declaration without ; or body")
	}
}

// classify says what a head followed by { is.
func classify(head []tok) (kind, name string, tps []tparam) {
	h := head
	for {
		ps, rest, ok := templateHeader(h)
		if !ok {
			break
		}
		tps = append(tps, ps...)
		h = rest
	}
	h, _ = takeAttrs(h)
	if len(h) == 0 {
		return "other", "", nil
	}
	switch {
	case h[0].is("namespace"):
		return "namespace", "", nil
	case h[0].is("struct") || h[0].is("class") || h[0].is("union"):
		if len(h) > 1 && h[1].kind == 'i' {
			name = h[1].text
		}
		return "struct", name, tps
	case h[0].is("enum"):
		return "enum", "", nil
	}
	for _, t := range h {
		if t.is("operator") {
			return "function", "", tps
		}
	}
	if indexOf(h, "=") >= 0 {
		return "other", "", nil
	}
	for _, t := range h {
		if t.is("(") {
			return "function", "", tps
		}
	}
	return "other", "", nil
}

// specifiers are not part of a function's return type.
var specifiers = map[string]bool{"inline": true, "static": true, "constexpr": true, "kernel": true, "extern": true,
	"METAL_FUNC": true, "__attribute__": true, "typename": true}

func (l *linter) function(head, body []tok, owner string, otp []tparam) {
	f := &fnDef{owner: owner, otparams: otp, body: body}
	h := head
	for {
		ps, rest, ok := templateHeader(h)
		if !ok {
			break
		}
		f.tparams = append(f.tparams, ps...)
		h = rest
	}
	h, attrs := takeAttrs(h)
	for _, a := range attrs {
		switch a.name {
		case "kernel":
			f.kernel = true
		case "max_total_threads_per_threadgroup":
			f.maxThreads = a.args
			if len(a.args) == 0 {
				f.maxThreads = []tok{a.at}
			}
		}
	}
	k := -1
	for i, t := range h {
		if t.is("(") {
			if i >= 1 && h[i-1].is("operator") && i+2 < len(h) && h[i+1].is(")") && h[i+2].is("(") {
				k = i + 2
			} else {
				k = i
			}
			break
		}
	}
	if k < 1 {
		l.parseErr(head[0], "cannot find the name of a function")
		return
	}
	n := k - 1
	switch {
	case h[n].is(")") && n >= 2 && h[n-2].is("operator"):
		f.name, n = "operator()", n-2
	case h[n].is(">"):
		depth := 0
		for ; n >= 0; n-- {
			if h[n].is(">") {
				depth++
			} else if h[n].is("<") {
				depth--
				if depth == 0 {
					break
				}
			}
		}
		n--
		if n < 0 {
			l.parseErr(head[0], "cannot find the name of a function")
			return
		}
		f.name = h[n].text
	default:
		f.name = h[n].text
	}
	f.at = h[n]
	if n >= 2 && h[n-1].is("::") {
		f.owner = h[n-2].text
	}
	for _, t := range h[:n] {
		if t.is("kernel") {
			f.kernel = true
		}
		if !specifiers[t.text] && t.kind == 'i' || t.is("*") || t.is("&") {
			f.ret = append(f.ret, t)
		}
	}
	end := matchClose(h, k)
	if end < 0 {
		l.parseErr(head[0], "unbalanced parameters of "+f.name)
		return
	}
	ps := splitTop(h[k+1 : end])
	if len(ps) == 1 && len(ps[0]) == 1 && ps[0][0].is("void") {
		ps = nil
	}
	for _, p := range ps {
		if len(p) == 0 {
			continue
		}
		if p[0].is("...") {
			f.nparam = 1 << 20
			continue
		}
		f.params = append(f.params, p)
		f.nparam++
		if indexOf(p, "=") < 0 {
			f.nreq = f.nparam
		}
	}
	l.fns = append(l.fns, f)
}

func (l *linter) enum(body []tok) {
	next := int64(0)
	for _, e := range splitTop(body) {
		if len(e) == 0 || e[0].kind != 'i' {
			continue
		}
		if k := indexOf(e, "="); k >= 0 {
			if v, err := l.eval(e[k+1:], nil); err == nil {
				next = v
			}
		}
		l.consts[e[0].text] = []tok{{kind: 'n', text: fmt.Sprint(next)}}
		next++
	}
}

// declaration handles a declaration ending with ;: explicit
// instantiations, typedefs, constants.
func (l *linter) declaration(h []tok) {
	if len(h) == 0 {
		return
	}
	switch {
	case h[0].is("template") && (len(h) < 2 || !h[1].is("<")):
		rest, attrs := takeAttrs(h[1:])
		host := ""
		for _, a := range attrs {
			if a.name == "host_name" {
				host = joinStrings(a.args)
			}
		}
		if i := indexOf(rest, "decltype"); i >= 0 && i+1 < len(rest) && rest[i+1].is("(") {
			if j := matchClose(rest, i+1); j > 0 {
				rest = rest[i+2 : j]
			}
		}
		for i := 0; i+1 < len(rest); i++ {
			if rest[i].kind == 'i' && rest[i+1].is("<") {
				j := matchAngle(rest, i+1)
				if j < 0 {
					break
				}
				if host == "" {
					host = rest[i].text
				}
				l.insts = append(l.insts, instance{host: host, fn: rest[i].text, args: splitTop(rest[i+2 : j]), at: rest[i]})
				return
			}
		}
	case h[0].is("typedef"):
		if n := len(h); n >= 3 && h[n-1].kind == 'i' {
			l.typedefs[h[n-1].text] = h[1 : n-1]
		}
	case h[0].is("using") && len(h) >= 4 && h[2].is("="):
		l.typedefs[h[1].text] = h[3:]
	default:
		k := indexOf(h, "=")
		if k < 1 {
			return
		}
		isConst := false
		for _, t := range h[:k] {
			if t.is("constexpr") || t.is("const") || t.is("constant") {
				isConst = true
			}
		}
		if isConst && h[k-1].kind == 'i' {
			l.consts[h[k-1].text] = h[k+1:]
		}
	}
}

// rawInstance handles instantiate_kernel(...) and register_kernel(...)
// left unexpanded (a library without the project's prelude).
func (l *linter) rawInstance(at tok, args []tok) {
	as := splitTop(args)
	if at.is("register_kernel") {
		if len(as) == 1 && len(as[0]) == 1 {
			l.insts = append(l.insts, instance{host: as[0][0].text, fn: as[0][0].text, at: at})
		}
		return
	}
	if len(as) < 2 || len(as[1]) != 1 {
		l.parseErr(at, "instantiate_kernel(name, function, template arguments...) expected")
		return
	}
	l.insts = append(l.insts, instance{host: joinStrings(as[0]), fn: as[1][0].text, args: as[2:], at: at})
}

func joinStrings(ts []tok) string {
	var b strings.Builder
	for _, t := range ts {
		if t.kind == 's' {
			b.WriteString(strings.Trim(t.text, `"`))
		}
	}
	return b.String()
}

// eval evaluates a constant expression, with template arguments env.
func (l *linter) eval(ts []tok, env map[string][]tok) (int64, error) {
	var visit func(ts []tok, depth int) (int64, error)
	visit = func(ts []tok, depth int) (int64, error) {
		if depth > 20 {
			return 0, fmt.Errorf("constant defined by itself")
		}
		return evalConst(ts, func(s string) (int64, bool) {
			if v, ok := env[s]; ok {
				n, err := visit(v, depth+1)
				return n, err == nil
			}
			if v, ok := l.consts[s]; ok {
				n, err := visit(v, depth+1)
				return n, err == nil
			}
			return 0, false
		}, func(t []tok) (int64, error) {
			n, err := l.sizeOf(l.resolve(t, env))
			return int64(n), err
		})
	}
	return visit(ts, 0)
}

// keywords that can stand before an identifier and [ without declaring it.
var stmtKeywords = map[string]bool{"return": true, "else": true, "case": true, "goto": true, "do": true,
	"throw": true, "delete": true, "sizeof": true, "new": true, "co_return": true, "co_yield": true}

// vla reports arrays of f's body whose sizes are not constant expressions.
func (l *linter) vla(f *fnDef) {
	known := map[string]bool{}
	for _, p := range append(append([]tparam{}, f.otparams...), f.tparams...) {
		if !p.typ {
			known[p.name] = true
		}
	}
	b := f.body
	for i := 0; i < len(b); i++ {
		if !(i == 0 || b[i-1].is(";") || b[i-1].is("{") || b[i-1].is("}") || b[i-1].is("(") || b[i-1].is(")") || b[i-1].is(":")) {
			continue
		}
		// A run of type tokens, then a name, then [.
		j, names := i, 0
		for j < len(b) {
			switch {
			case b[j].kind == 'i':
				names++
				j++
				continue
			case b[j].is("::"):
				j++
				continue
			case b[j].is("<") && j > i:
				k := matchAngle(b, j)
				if k < 0 {
					break
				}
				j = k + 1
				continue
			}
			break
		}
		if names < 2 || j >= len(b) || !b[j].is("[") || b[j-1].kind != 'i' || stmtKeywords[b[i].text] {
			continue
		}
		// Declarators up to the ;.
		for k := j - 1; k < len(b) && !b[k].is(";"); {
			if b[k].kind != 'i' {
				break
			}
			name := b[k]
			k++
			for k < len(b) && b[k].is("[") {
				e := matchClose(b, k)
				if e < 0 {
					return
				}
				dim := b[k+1 : e]
				_, err := evalConst(dim, func(s string) (int64, bool) {
					if known[s] {
						return 1, true
					}
					v, ok := l.consts[s]
					if !ok {
						return 0, false
					}
					_, err := l.eval(v, nil)
					return 1, err == nil
				}, func([]tok) (int64, error) { return 1, nil })
				if err != nil {
					l.add(Finding{Rule: "vla", Pos: name.pos(), Kernel: f.name,
						Msg: fmt.Sprintf("array %s[%s] has a size that is not a constant expression (%v)", name.text, joinToks(dim), err)})
				}
				k = e + 1
			}
			// Skip an initializer, then the next declarator after a comma.
			for k < len(b) && !b[k].is(",") && !b[k].is(";") {
				if b[k].is("(") || b[k].is("[") || b[k].is("{") {
					if e := matchClose(b, k); e > 0 {
						k = e
					}
				}
				k++
			}
			if k < len(b) && b[k].is(",") {
				k++
				continue
			}
			break
		}
	}
}

func joinToks(ts []tok) string {
	var b strings.Builder
	for i, t := range ts {
		if i > 0 && t.space {
			b.WriteByte(' ')
		}
		b.WriteString(t.text)
	}
	return b.String()
}

// callGraph resolves the calls of every function body to the functions
// of the library they may call (by name, owner and argument count).
func (l *linter) callGraph() {
	for _, f := range l.fns {
		b := f.body
		for i := 0; i < len(b); i++ {
			t := b[i]
			if t.kind != 'i' || len(l.byName[t.text]) == 0 {
				continue
			}
			j := i + 1
			if j < len(b) && b[j].is("<") {
				k := matchAngle(b, j)
				if k < 0 {
					continue
				}
				j = k + 1
			}
			if j >= len(b) || !b[j].is("(") || i > 0 && (b[i-1].is(".") || b[i-1].is("->")) {
				continue
			}
			e := matchClose(b, j)
			if e < 0 {
				continue
			}
			argc := 0
			if e > j+1 {
				argc = len(splitTop(b[j+1 : e]))
			}
			q, back := "", i-1
			if back >= 0 && b[back].is("template") {
				back--
			}
			if back >= 1 && b[back].is("::") {
				k := back - 1
				if b[k].is(">") {
					depth := 0
					for ; k >= 0; k-- {
						if b[k].is(">") {
							depth++
						} else if b[k].is("<") {
							depth--
							if depth == 0 {
								break
							}
						}
					}
					k--
				}
				if k >= 0 {
					q = b[k].text
				}
				if q == "" {
					q = "?"
				}
			}
			f.calls = append(f.calls, l.resolveCall(f, t.text, q, argc)...)
		}
	}
}

func (l *linter) resolveCall(from *fnDef, name, q string, argc int) []*fnDef {
	var cands []*fnDef
	for _, g := range l.byName[name] {
		if argc >= g.nreq && argc <= g.nparam {
			cands = append(cands, g)
		}
	}
	keep := func(ok func(*fnDef) bool) []*fnDef {
		var out []*fnDef
		for _, g := range cands {
			if ok(g) {
				out = append(out, g)
			}
		}
		return out
	}
	switch {
	case q != "" && l.structs[q]:
		return keep(func(g *fnDef) bool { return g.owner == q })
	case q != "": // a template parameter (Op::apply): any struct's member
		return keep(func(g *fnDef) bool { return g.owner != "" })
	}
	if from.owner != "" {
		if own := keep(func(g *fnDef) bool { return g.owner == from.owner }); len(own) > 0 {
			return own
		}
	}
	return keep(func(g *fnDef) bool { return g.owner == "" })
}

// recursion reports the cycles of the call graph (Tarjan's strongly
// connected components).
func (l *linter) recursion() {
	index := map[*fnDef]int{}
	low := map[*fnDef]int{}
	on := map[*fnDef]bool{}
	var stack []*fnDef
	n := 0
	var visit func(f *fnDef)
	visit = func(f *fnDef) {
		index[f], low[f] = n, n
		n++
		stack = append(stack, f)
		on[f] = true
		for _, g := range f.calls {
			if _, ok := index[g]; !ok {
				visit(g)
				low[f] = min(low[f], low[g])
			} else if on[g] {
				low[f] = min(low[f], index[g])
			}
		}
		if low[f] != index[f] {
			return
		}
		var scc []*fnDef
		for {
			g := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			on[g] = false
			scc = append(scc, g)
			if g == f {
				break
			}
		}
		self := false
		for _, g := range f.calls {
			self = self || g == f
		}
		if len(scc) == 1 && !self {
			return
		}
		names := make([]string, len(scc))
		for i, g := range scc {
			names[len(scc)-1-i] = qualName(g)
		}
		names = append(names, names[0])
		l.add(Finding{Rule: "recursion", Pos: scc[len(scc)-1].at.pos(), Kernel: qualName(scc[len(scc)-1]),
			Msg: "recursion (Metal allows none): " + strings.Join(names, " -> ")})
	}
	for _, f := range l.fns {
		if _, ok := index[f]; !ok {
			visit(f)
		}
	}
}

func qualName(f *fnDef) string {
	if f.owner != "" {
		return f.owner + "::" + f.name
	}
	return f.name
}

// resolve returns the canonical spelling of a type: template arguments
// and typedefs substituted, address spaces, cv-qualifiers and metal::
// dropped ("uint2", "atomic<uint>", "float*").
func (l *linter) resolve(ts []tok, env map[string][]tok) string {
	var parts []string
	var walk func(ts []tok, depth int)
	walk = func(ts []tok, depth int) {
		for i := 0; i < len(ts); i++ {
			t := ts[i]
			switch {
			case depth < 20 && t.kind == 'i' && env[t.text] != nil:
				walk(env[t.text], depth+1)
			case depth < 20 && t.kind == 'i' && l.typedefs[t.text] != nil:
				walk(l.typedefs[t.text], depth+1)
			case t.is("const") || t.is("volatile") || t.is("device") || t.is("constant") || t.is("thread") ||
				t.is("threadgroup") || t.is("typename") || t.is("struct"):
			case t.is("metal") && i+1 < len(ts) && ts[i+1].is("::"):
				i++
			default:
				parts = append(parts, t.text)
			}
		}
	}
	walk(ts, 0)
	s := strings.Join(parts, " ")
	for _, r := range [][2]string{{"unsigned int", "uint"}, {"unsigned short", "ushort"}, {"unsigned char", "uchar"},
		{"unsigned long", "ulong"}, {"signed char", "char"}, {" <", "<"}, {"< ", "<"}, {" >", ">"}, {" ,", ","}, {" *", "*"}, {" &", "&"}} {
		s = strings.ReplaceAll(s, r[0], r[1])
	}
	return s
}

var scalarSizes = map[string]int{
	"bool": 1, "char": 1, "uchar": 1, "int8_t": 1, "uint8_t": 1,
	"short": 2, "ushort": 2, "half": 2, "bfloat": 2, "int16_t": 2, "uint16_t": 2,
	"int": 4, "uint": 4, "float": 4, "int32_t": 4, "uint32_t": 4,
	"long": 8, "ulong": 8, "int64_t": 8, "uint64_t": 8, "size_t": 8,
	"atomic_int": 4, "atomic_uint": 4, "atomic_float": 4, "atomic_bool": 4,
}

// sizeOf returns the size in bytes of a canonical type.
func (l *linter) sizeOf(t string) (int, error) {
	if n, ok := scalarSizes[t]; ok {
		return n, nil
	}
	for _, a := range []string{"atomic<", "_atomic<"} {
		if strings.HasPrefix(t, a) && strings.HasSuffix(t, ">") {
			return l.sizeOf(t[len(a) : len(t)-1])
		}
	}
	if strings.HasSuffix(t, "*") {
		return 8, nil
	}
	if n := len(t); n > 1 {
		if c := t[n-1]; c >= '2' && c <= '4' {
			if s, ok := scalarSizes[t[:n-1]]; ok {
				k := int(c - '0')
				if k == 3 {
					k = 4
				}
				return s * k, nil
			}
		}
	}
	return 0, fmt.Errorf("the lint does not know the size of %q", t)
}

// The built-in kernel attributes.
var (
	gridAttrs = []string{"thread_position_in_grid", "threads_per_grid", "thread_position_in_threadgroup",
		"threads_per_threadgroup", "dispatch_threads_per_threadgroup", "threadgroup_position_in_grid",
		"threadgroups_per_grid"}
	pairAttrs = [][]string{
		{"thread_position_in_grid", "threads_per_grid"},
		{"thread_position_in_threadgroup", "threads_per_threadgroup", "dispatch_threads_per_threadgroup"},
		{"threadgroup_position_in_grid", "threadgroups_per_grid"},
	}
	scalarAttrs = []string{"thread_index_in_threadgroup", "thread_index_in_simdgroup", "simdgroup_index_in_threadgroup",
		"simdgroups_per_threadgroup", "threads_per_simdgroup", "thread_execution_width", "thread_index_in_quadgroup",
		"quadgroup_index_in_threadgroup", "quadgroups_per_threadgroup", "dispatch_simdgroups_per_threadgroup",
		"dispatch_quadgroups_per_threadgroup"}
	otherAttrs = map[string]bool{"buffer": true, "threadgroup": true, "texture": true, "sampler": true,
		"stage_in": true, "grid_origin": true, "grid_size": true, "threadgroup_imageblock": true}
)

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// builtinType splits "uint2" into ("uint", 2); ok is false for a type
// Metal does not allow for a built-in attribute.
func builtinType(t string) (elem string, n int, ok bool) {
	for _, e := range []string{"ushort", "uint"} {
		if t == e {
			return e, 1, true
		}
		if len(t) == len(e)+1 && strings.HasPrefix(t, e) && (t[len(e)] == '2' || t[len(e)] == '3') {
			return e, int(t[len(e)] - '0'), true
		}
	}
	return "", 0, false
}

// kernels checks every kernel of the library, once per instantiation.
func (l *linter) kernels() {
	type exposure struct {
		f    *fnDef
		host string
		env  map[string][]tok
		at   tok
	}
	var exps []exposure
	for _, in := range l.insts {
		var f *fnDef
		for _, g := range l.byName[in.fn] {
			if g.owner == "" && (f == nil || len(g.tparams) > 0) {
				f = g
			}
		}
		if f == nil {
			l.add(Finding{Rule: "host-name", Pos: in.at.pos(), Kernel: in.host, Msg: "instantiates " + in.fn + ", which the library does not define"})
			continue
		}
		if len(f.tparams) == 0 {
			if len(in.args) > 0 {
				l.add(Finding{Rule: "host-name", Pos: in.at.pos(), Kernel: in.host, Msg: in.fn + " is not a template"})
			}
			if !f.kernel {
				l.add(Finding{Rule: "host-name", Pos: in.at.pos(), Kernel: in.host, Msg: in.fn + " is registered but not declared kernel"})
			}
			continue // exposed below, under its own name
		}
		if len(in.args) != len(f.tparams) {
			l.add(Finding{Rule: "host-name", Pos: in.at.pos(), Kernel: in.host,
				Msg: fmt.Sprintf("%d template arguments for %s, which takes %d", len(in.args), f.name, len(f.tparams))})
			continue
		}
		env := map[string][]tok{}
		for i, p := range f.tparams {
			env[p.name] = in.args[i]
		}
		exps = append(exps, exposure{f, in.host, env, in.at})
	}
	for _, f := range l.fns {
		if f.kernel && len(f.tparams) == 0 && f.owner == "" {
			exps = append(exps, exposure{f, f.name, nil, f.at})
		}
	}
	hosts := map[string]string{}
	for _, e := range exps {
		if prev, ok := hosts[e.host]; ok {
			l.add(Finding{Rule: "host-name", Pos: e.at.pos(), Kernel: e.host, Msg: "host name already used at " + prev})
			continue
		}
		hosts[e.host] = e.at.pos()
		l.infos = append(l.infos, l.kernel(e.f, e.host, e.env))
	}
}

// kernel checks one instantiation of kernel f.
func (l *linter) kernel(f *fnDef, host string, env map[string][]tok) KernelInfo {
	info := KernelInfo{Name: host, Function: f.name}
	add := func(rule string, at tok, format string, args ...any) {
		l.add(Finding{Rule: rule, Pos: at.pos(), Kernel: host, Msg: fmt.Sprintf(format, args...)})
	}
	if r := l.resolve(f.ret, env); r != "void" {
		add("kernel-return", f.at, "kernel %s returns %q, not void", f.name, r)
	}
	if f.maxThreads != nil {
		v, err := l.eval(f.maxThreads, env)
		switch {
		case err != nil:
			add("max-threads", f.at, "max_total_threads_per_threadgroup(%s): %v", joinToks(f.maxThreads), err)
		case v < 1 || v > 1024:
			add("max-threads", f.at, "max_total_threads_per_threadgroup(%d) outside 1..1024", v)
		default:
			info.MaxThreads = int(v)
		}
	}
	type builtin struct {
		typ string
		at  tok
	}
	builtins := map[string]builtin{}
	bufs := map[int64]tok{}
	for _, p := range f.params {
		rest, attrs := takeAttrs(p)
		at := p[0]
		for _, t := range rest {
			if t.kind == 'i' {
				at = t
			}
		}
		if len(attrs) == 0 {
			add("attr-unknown", at, "parameter %s has no attribute ([[buffer(n)]] or a built-in)", at.text)
			continue
		}
		a := attrs[0]
		// The type is what precedes the parameter's name.
		typ := rest
		if n := len(rest); n > 0 && rest[n-1].kind == 'i' {
			typ = rest[:n-1]
		}
		switch {
		case a.name == "buffer":
			n, err := l.eval(a.args, env)
			switch {
			case err != nil:
				add("buffers", at, "[[buffer(%s)]]: %v", joinToks(a.args), err)
			case n < 0 || n > 30:
				add("buffers", at, "[[buffer(%d)]] of %s: Metal has buffer indices 0 to 30", n, at.text)
			case bufs[n].text != "":
				add("buffers", at, "[[buffer(%d)]] of %s is also that of %s", n, at.text, bufs[n].text)
			default:
				bufs[n] = at
				info.Buffers = append(info.Buffers, int(n))
			}
		case a.name == "threadgroup":
			n, err := l.eval(a.args, env)
			if err != nil || n < 0 || n > 30 {
				add("buffers", at, "[[threadgroup(%s)]] of %s: indices are 0 to 30", joinToks(a.args), at.text)
			}
		case contains(gridAttrs, a.name) || contains(scalarAttrs, a.name):
			builtins[a.name] = builtin{l.resolve(typ, env), at}
		case otherAttrs[a.name]:
		default:
			add("attr-unknown", at, "[[%s]] of %s is not a kernel parameter attribute", a.name, at.text)
		}
	}
	if len(bufs) > 31 {
		add("buffers", f.at, "%d buffer arguments: Metal binds at most 31", len(bufs))
	}
	sort.Ints(info.Buffers)
	// Types of the built-ins.
	var grid []string
	for _, name := range gridAttrs {
		b, ok := builtins[name]
		if !ok {
			continue
		}
		if _, _, ok := builtinType(b.typ); !ok {
			add("attr-type", b.at, "[[%s]] %s is %q: Metal takes ushort, uint, or a 2- or 3-component vector of them", name, b.at.text, b.typ)
			continue
		}
		grid = append(grid, name)
	}
	for _, name := range scalarAttrs {
		b, ok := builtins[name]
		if !ok {
			continue
		}
		if _, n, ok := builtinType(b.typ); !ok || n != 1 {
			add("attr-scalar", b.at, "[[%s]] %s is %q: Metal takes a scalar ushort or uint", name, b.at.text, b.typ)
		}
	}
	for i := 1; i < len(grid); i++ {
		a, b := builtins[grid[0]], builtins[grid[i]]
		_, na, _ := builtinType(a.typ)
		_, nb, _ := builtinType(b.typ)
		if na != nb {
			add("attr-components", b.at, "[[%s]] %s is %s but [[%s]] %s is %s: Metal requires the position and size attributes of a kernel to have one component count",
				grid[i], b.at.text, b.typ, grid[0], a.at.text, a.typ)
			break
		}
	}
	for _, pair := range pairAttrs {
		var first string
		for _, name := range pair {
			b, ok := builtins[name]
			if !ok || !contains(grid, name) {
				continue
			}
			if first == "" {
				first = name
				continue
			}
			if a := builtins[first]; a.typ != b.typ {
				add("attr-pair-type", b.at, "[[%s]] %s is %s but [[%s]] %s is %s: Metal requires one type", name, b.at.text, b.typ, first, a.at.text, a.typ)
			}
		}
	}
	info.ThreadgroupBytes = l.threadgroupMemory(f, host, env)
	return info
}

// threadgroupMemory returns the static threadgroup memory of kernel f
// instantiated with env (its body's and its callees' threadgroup
// variables), reporting it if it exceeds maxThreadgroupMemory.
func (l *linter) threadgroupMemory(f *fnDef, host string, env map[string][]tok) int {
	total := 0
	seen := map[*fnDef]bool{}
	var walk func(g *fnDef, env map[string][]tok)
	walk = func(g *fnDef, env map[string][]tok) {
		if seen[g] {
			return
		}
		seen[g] = true
		b := g.body
		for i := 0; i < len(b); i++ {
			if !b[i].is("threadgroup") {
				continue
			}
			j := i + 1
			var typ []tok
			for j < len(b) && (b[j].kind == 'i' || b[j].is("::")) && !(j+1 < len(b) && (b[j+1].is("[") || b[j+1].is(";") || b[j+1].is(",") || b[j+1].is("="))) {
				typ = append(typ, b[j])
				j++
				if j < len(b) && b[j].is("<") {
					if k := matchAngle(b, j); k > 0 {
						typ = append(typ, b[j:k+1]...)
						j = k + 1
					}
				}
			}
			if j >= len(b) || b[j].kind != 'i' || len(typ) == 0 {
				continue // a pointer, a reference or a cast
			}
			size, err := l.sizeOf(l.resolve(typ, env))
			for j < len(b) && b[j].kind == 'i' {
				name := b[j]
				n := size
				for j++; j < len(b) && b[j].is("["); {
					e := matchClose(b, j)
					if e < 0 {
						return
					}
					d, derr := l.eval(b[j+1:e], env)
					if derr != nil && err == nil {
						err = derr
					}
					n *= int(d)
					j = e + 1
				}
				if err != nil {
					l.add(Finding{Rule: "threadgroup-memory", Pos: name.pos(), Kernel: host,
						Msg: fmt.Sprintf("cannot size threadgroup variable %s: %v", name.text, err)})
					return
				}
				total += (n + 15) &^ 15
				for j < len(b) && !b[j].is(",") && !b[j].is(";") {
					j++
				}
				if j < len(b) && b[j].is(",") {
					j++
				}
			}
			i = j
		}
		for _, c := range g.calls {
			if !c.kernel && len(c.tparams) == 0 {
				walk(c, nil)
			}
		}
	}
	walk(f, env)
	if total > maxThreadgroupMemory {
		l.add(Finding{Rule: "threadgroup-memory", Pos: f.at.pos(), Kernel: host,
			Msg: fmt.Sprintf("%d bytes of threadgroup memory: Metal gives a threadgroup at most %d", total, maxThreadgroupMemory)})
	}
	return total
}
