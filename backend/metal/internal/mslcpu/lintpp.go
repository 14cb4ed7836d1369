package mslcpu

// lintpp.go: the lexer, preprocessor and constant-expression evaluator
// behind Lint. They cover what MSL libraries use: object-like and
// function-like macros (#, ##, __VA_ARGS__), #if/#ifdef/#ifndef/#elif/
// #else/#endif, #undef, #line; #include <...> of Metal headers is
// skipped (Metal cannot include project files).

import (
	"fmt"
	"strconv"
	"strings"
)

// tok is a preprocessing token.
type tok struct {
	kind  byte // 'i' identifier, 'n' number, 's' string, 'c' character, 'p' punctuator
	text  string
	file  string
	line  int
	space bool     // whitespace before it (for #stringizing)
	hide  []string // macros not to expand in it (their own expansion)
}

func (t tok) pos() string { return fmt.Sprintf("%s:%d", t.file, t.line) }

func (t tok) is(s string) bool { return t.kind != 's' && t.kind != 'c' && t.text == s }

func (t tok) hidden(name string) bool {
	for _, h := range t.hide {
		if h == name {
			return true
		}
	}
	return false
}

var puncts = []string{
	"...", "<<=", ">>=", "->*", "::", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||",
	"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "##", ".*",
}

func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isIdentChar(c byte) bool  { return isIdentStart(c) || c >= '0' && c <= '9' }
func isDigit(c byte) bool      { return c >= '0' && c <= '9' }

// lexLine splits one logical line (comments already removed) into tokens.
func lexLine(s, file string, line int) ([]tok, error) {
	var out []tok
	space := false
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' || c == '\n':
			space = true
			i++
			continue
		case isIdentStart(c):
			j := i + 1
			for j < len(s) && isIdentChar(s[j]) {
				j++
			}
			out = append(out, tok{kind: 'i', text: s[i:j]})
			i = j
		case isDigit(c) || c == '.' && i+1 < len(s) && isDigit(s[i+1]):
			j := i + 1
			for j < len(s) {
				d := s[j]
				if (d == '+' || d == '-') && strings.ContainsRune("eEpP", rune(s[j-1])) {
					j++
					continue
				}
				if isIdentChar(d) || d == '.' {
					j++
					continue
				}
				break
			}
			out = append(out, tok{kind: 'n', text: s[i:j]})
			i = j
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(s) && s[j] != c {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) {
				return nil, fmt.Errorf("%s:%d: unterminated literal", file, line)
			}
			k := byte('s')
			if c == '\'' {
				k = 'c'
			}
			out = append(out, tok{kind: k, text: s[i : j+1]})
			i = j + 1
		default:
			p := string(c)
			for _, q := range puncts {
				if strings.HasPrefix(s[i:], q) {
					p = q
					break
				}
			}
			out = append(out, tok{kind: 'p', text: p})
			i += len(p)
		}
		out[len(out)-1].file, out[len(out)-1].line, out[len(out)-1].space = file, line, space
		space = false
	}
	return out, nil
}

// stripComments replaces comments with spaces, keeping newlines.
func stripComments(s string) string {
	b := []byte(s)
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '"' || b[i] == '\'':
			q := b[i]
			for i++; i < len(b) && b[i] != q && b[i] != '\n'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '/':
			for ; i < len(b) && b[i] != '\n'; i++ {
				b[i] = ' '
			}
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '*':
			b[i], b[i+1] = ' ', ' '
			for i += 2; i < len(b) && !(b[i] == '*' && i+1 < len(b) && b[i+1] == '/'); i++ {
				if b[i] != '\n' {
					b[i] = ' '
				}
			}
			if i+1 < len(b) {
				b[i], b[i+1] = ' ', ' '
				i++
			}
		}
	}
	return string(b)
}

type macro struct {
	fn       bool
	params   []string
	variadic bool
	body     []tok
}

type cond struct {
	active, taken, parent bool
}

// preproc preprocesses one source into tokens.
type preproc struct {
	macros map[string]*macro
	errs   []string
}

func preprocess(src, file string) ([]tok, []string) {
	pp := &preproc{macros: map[string]*macro{}}
	lines := strings.Split(stripComments(src), "\n")
	var out, pending []tok
	var conds []cond
	active := func() bool { return len(conds) == 0 || conds[len(conds)-1].active }
	flush := func() {
		out = append(out, pp.expand(pending)...)
		pending = nil
	}
	line := 1
	for i := 0; i < len(lines); i++ {
		start := line
		l := lines[i]
		line++
		for strings.HasSuffix(l, "\\") && i+1 < len(lines) {
			i++
			l = l[:len(l)-1] + " " + lines[i]
			line++
		}
		ts, err := lexLine(l, file, start)
		if err != nil {
			pp.errs = append(pp.errs, err.Error())
			continue
		}
		if len(ts) == 0 {
			continue
		}
		if !ts[0].is("#") {
			if active() {
				pending = append(pending, ts...)
			}
			continue
		}
		if len(ts) == 1 {
			continue
		}
		d, args := ts[1].text, ts[2:]
		switch d {
		case "if", "ifdef", "ifndef":
			on := false
			if active() {
				switch d {
				case "ifdef", "ifndef":
					if len(args) > 0 {
						_, def := pp.macros[args[0].text]
						on = def == (d == "ifdef")
					}
				default:
					on = pp.evalIf(args)
				}
			}
			conds = append(conds, cond{active: on, taken: on, parent: active()})
			continue
		case "elif", "else":
			if len(conds) == 0 {
				pp.errs = append(pp.errs, ts[0].pos()+": #"+d+" without #if")
				continue
			}
			c := &conds[len(conds)-1]
			on := false
			if c.parent && !c.taken {
				on = d == "else" || pp.evalIf(args)
			}
			c.active, c.taken = on, c.taken || on
			continue
		case "endif":
			if len(conds) == 0 {
				pp.errs = append(pp.errs, ts[0].pos()+": #endif without #if")
				continue
			}
			conds = conds[:len(conds)-1]
			continue
		}
		if !active() {
			continue
		}
		switch d {
		case "define":
			flush()
			pp.define(ts[0], args, l)
		case "undef":
			flush()
			if len(args) > 0 {
				delete(pp.macros, args[0].text)
			}
		case "line":
			flush()
			if len(args) > 0 {
				if n, err := strconv.Atoi(args[0].text); err == nil {
					line = n
				}
				if len(args) > 1 && args[1].kind == 's' {
					file = strings.Trim(args[1].text, `"`)
				}
			}
		case "include":
			if len(args) > 0 && args[0].kind == 's' {
				pp.errs = append(pp.errs, ts[0].pos()+": #include of "+args[0].text+": Metal compiles a library from one source")
			}
		case "error":
			pp.errs = append(pp.errs, ts[0].pos()+": #error")
		}
	}
	flush()
	if len(conds) > 0 {
		pp.errs = append(pp.errs, file+": unterminated #if")
	}
	return out, pp.errs
}

func (pp *preproc) define(at tok, args []tok, raw string) {
	if len(args) == 0 || args[0].kind != 'i' {
		pp.errs = append(pp.errs, at.pos()+": bad #define")
		return
	}
	m := &macro{}
	name := args[0].text
	rest := args[1:]
	if len(rest) > 0 && rest[0].is("(") && !rest[0].space {
		m.fn = true
		i := 1
		for ; i < len(rest) && !rest[i].is(")"); i++ {
			switch {
			case rest[i].is(","):
			case rest[i].is("..."):
				m.params = append(m.params, "__VA_ARGS__")
				m.variadic = true
			default:
				m.params = append(m.params, rest[i].text)
			}
		}
		rest = rest[min(i+1, len(rest)):]
	}
	m.body = rest
	pp.macros[name] = m
}

// evalIf evaluates a #if or #elif condition.
func (pp *preproc) evalIf(args []tok) bool {
	var ts []tok
	for i := 0; i < len(args); i++ {
		if args[i].is("defined") {
			j := i + 1 // the name, or ( before it
			paren := j < len(args) && args[j].is("(")
			if paren {
				j++
			}
			v := "0"
			if j < len(args) {
				if _, ok := pp.macros[args[j].text]; ok {
					v = "1"
				}
			}
			if paren {
				j++ // the closing )
			}
			ts = append(ts, tok{kind: 'n', text: v})
			i = j
			continue
		}
		ts = append(ts, args[i])
	}
	ts = pp.expand(ts)
	v, err := evalConst(ts, func(string) (int64, bool) { return 0, true }, nil)
	if err != nil {
		pp.errs = append(pp.errs, fmt.Sprintf("#if: %v", err))
		return false
	}
	return v != 0
}

// expand macro-expands ts (rescanning replacements, with hide sets).
func (pp *preproc) expand(ts []tok) []tok {
	// stack holds the tokens still to scan, the next one last.
	stack := make([]tok, len(ts))
	for i, t := range ts {
		stack[len(ts)-1-i] = t
	}
	push := func(body []tok) {
		for i := len(body) - 1; i >= 0; i-- {
			stack = append(stack, body[i])
		}
	}
	var out []tok
	for len(stack) > 0 {
		t := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		m, ok := pp.macros[t.text]
		if t.kind != 'i' || !ok || t.hidden(t.text) {
			out = append(out, t)
			continue
		}
		if !m.fn {
			push(pp.subst(m, nil, t))
			continue
		}
		if len(stack) == 0 || !stack[len(stack)-1].is("(") {
			out = append(out, t)
			continue
		}
		// Collect the arguments: balanced parentheses, split at top-level commas.
		stack = stack[:len(stack)-1]
		var args [][]tok
		var cur []tok
		depth := 0
		closed := false
		for len(stack) > 0 {
			a := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if depth == 0 && a.is(")") {
				closed = true
				break
			}
			if depth == 0 && a.is(",") && !(m.variadic && len(args) == len(m.params)-1) {
				args = append(args, cur)
				cur = nil
				continue
			}
			if a.is("(") {
				depth++
			} else if a.is(")") {
				depth--
			}
			cur = append(cur, a)
		}
		if !closed {
			pp.errs = append(pp.errs, t.pos()+": unterminated call of macro "+t.text)
			return out
		}
		args = append(args, cur)
		if len(m.params) == 0 && len(args) == 1 && len(args[0]) == 0 {
			args = nil
		}
		if len(args) < len(m.params) && m.variadic && len(args) == len(m.params)-1 {
			args = append(args, nil)
		}
		if len(args) != len(m.params) {
			pp.errs = append(pp.errs, fmt.Sprintf("%s: macro %s takes %d arguments, not %d", t.pos(), t.text, len(m.params), len(args)))
			continue
		}
		push(pp.subst(m, args, t))
	}
	return out
}

// subst returns the replacement of macro m invoked at t with args.
func (pp *preproc) subst(m *macro, args [][]tok, at tok) []tok {
	param := func(s string) int {
		for i, p := range m.params {
			if p == s {
				return i
			}
		}
		return -1
	}
	var r []tok
	body := m.body
	for i := 0; i < len(body); i++ {
		b := body[i]
		if m.fn && b.is("#") && i+1 < len(body) && param(body[i+1].text) >= 0 {
			i++
			var sb strings.Builder
			for k, a := range args[param(body[i].text)] {
				if k > 0 && a.space {
					sb.WriteByte(' ')
				}
				if a.kind == 's' || a.kind == 'c' {
					sb.WriteString(strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(a.text))
				} else {
					sb.WriteString(a.text)
				}
			}
			r = append(r, tok{kind: 's', text: `"` + sb.String() + `"`, file: at.file, line: at.line, space: b.space})
			continue
		}
		if k := param(b.text); m.fn && b.kind == 'i' && k >= 0 {
			pasted := i > 0 && body[i-1].is("##") || i+1 < len(body) && body[i+1].is("##")
			a := args[k]
			if !pasted {
				a = pp.expand(a)
			}
			for j, x := range a {
				if j == 0 {
					x.space = b.space
				}
				r = append(r, x)
			}
			if len(a) == 0 && pasted {
				r = append(r, tok{kind: 'p', text: ""}) // placemarker
			}
			continue
		}
		b.file, b.line = at.file, at.line
		r = append(r, b)
	}
	// ## pastes its neighbours into one token.
	for i := 0; i < len(r); i++ {
		if !r[i].is("##") || i == 0 || i+1 >= len(r) {
			continue
		}
		text := r[i-1].text + r[i+1].text
		ts, err := lexLine(text, at.file, at.line)
		if err != nil || len(ts) > 1 {
			pp.errs = append(pp.errs, fmt.Sprintf("%s: pasting %q does not give a token", at.pos(), text))
		}
		joined := append(append([]tok{}, r[:i-1]...), ts...)
		r = append(joined, r[i+2:]...)
		i = len(joined) - 1
	}
	out := r[:0]
	hide := append(append([]string{}, at.hide...), at.text)
	for _, x := range r {
		if x.kind == 'p' && x.text == "" {
			continue
		}
		x.hide = append(append([]string{}, x.hide...), hide...)
		out = append(out, x)
	}
	return out
}

// evalConst evaluates an integer constant expression. ident resolves
// identifiers (false: not a constant); size gives sizeof(type).
func evalConst(ts []tok, ident func(string) (int64, bool), size func([]tok) (int64, error)) (int64, error) {
	e := &evaluator{ts: ts, ident: ident, size: size}
	v, err := e.ternary()
	if err == nil && e.i < len(e.ts) {
		err = fmt.Errorf("unexpected %q", e.ts[e.i].text)
	}
	return v, err
}

type evaluator struct {
	ts    []tok
	i     int
	ident func(string) (int64, bool)
	size  func([]tok) (int64, error)
}

func (e *evaluator) peek() string {
	if e.i < len(e.ts) && e.ts[e.i].kind != 's' {
		return e.ts[e.i].text
	}
	return ""
}

var binPrec = map[string]int{
	"||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6, "<": 7, ">": 7, "<=": 7, ">=": 7,
	"<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10,
}

func (e *evaluator) ternary() (int64, error) {
	c, err := e.binary(1)
	if err != nil || e.peek() != "?" {
		return c, err
	}
	e.i++
	a, err := e.ternary()
	if err != nil {
		return 0, err
	}
	if e.peek() != ":" {
		return 0, fmt.Errorf("missing : in ?:")
	}
	e.i++
	b, err := e.ternary()
	if c != 0 {
		return a, err
	}
	return b, err
}

func (e *evaluator) binary(prec int) (int64, error) {
	a, err := e.unary()
	if err != nil {
		return 0, err
	}
	for {
		op := e.peek()
		p, ok := binPrec[op]
		if !ok || p < prec {
			return a, nil
		}
		e.i++
		b, err := e.binary(p + 1)
		if err != nil {
			return 0, err
		}
		switch op {
		case "||":
			a = b2i(a != 0 || b != 0)
		case "&&":
			a = b2i(a != 0 && b != 0)
		case "|":
			a |= b
		case "^":
			a ^= b
		case "&":
			a &= b
		case "==":
			a = b2i(a == b)
		case "!=":
			a = b2i(a != b)
		case "<":
			a = b2i(a < b)
		case ">":
			a = b2i(a > b)
		case "<=":
			a = b2i(a <= b)
		case ">=":
			a = b2i(a >= b)
		case "<<":
			a <<= uint64(b) & 63
		case ">>":
			a >>= uint64(b) & 63
		case "+":
			a += b
		case "-":
			a -= b
		case "*":
			a *= b
		case "/", "%":
			if b == 0 {
				return 0, fmt.Errorf("division by zero")
			}
			if op == "/" {
				a /= b
			} else {
				a %= b
			}
		}
	}
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// castTypes may be used as functional casts in constant expressions.
var castTypes = map[string]bool{"int": true, "uint": true, "long": true, "ulong": true, "short": true,
	"ushort": true, "char": true, "uchar": true, "bool": true, "size_t": true, "int32_t": true, "uint32_t": true}

func (e *evaluator) unary() (int64, error) {
	if e.i >= len(e.ts) {
		return 0, fmt.Errorf("expression ends early")
	}
	t := e.ts[e.i]
	switch {
	case t.is("-") || t.is("+") || t.is("!") || t.is("~"):
		e.i++
		v, err := e.unary()
		switch t.text {
		case "-":
			v = -v
		case "!":
			v = b2i(v == 0)
		case "~":
			v = ^v
		}
		return v, err
	case t.is("("):
		e.i++
		v, err := e.ternary()
		if err != nil {
			return 0, err
		}
		if e.peek() != ")" {
			return 0, fmt.Errorf("missing )")
		}
		e.i++
		return v, nil
	case t.kind == 'n':
		e.i++
		s := strings.TrimRight(strings.ToLower(t.text), "ul")
		v, err := strconv.ParseUint(s, 0, 64)
		if err != nil {
			return 0, fmt.Errorf("not an integer: %s", t.text)
		}
		return int64(v), nil
	case t.kind == 'c':
		e.i++
		s, err := strconv.Unquote(t.text)
		if err != nil || len(s) != 1 {
			return 0, fmt.Errorf("character %s", t.text)
		}
		return int64(s[0]), nil
	case t.is("true"):
		e.i++
		return 1, nil
	case t.is("false"):
		e.i++
		return 0, nil
	case t.is("sizeof") && e.size != nil:
		e.i++
		if e.peek() != "(" {
			return 0, fmt.Errorf("sizeof without (")
		}
		j, depth := e.i, 0
		for ; j < len(e.ts); j++ {
			if e.ts[j].is("(") {
				depth++
			} else if e.ts[j].is(")") {
				depth--
				if depth == 0 {
					break
				}
			}
		}
		if j >= len(e.ts) {
			return 0, fmt.Errorf("unbalanced sizeof")
		}
		n, err := e.size(e.ts[e.i+1 : j])
		e.i = j + 1
		return n, err
	case t.kind == 'i' && castTypes[t.text] && e.i+1 < len(e.ts) && e.ts[e.i+1].is("("):
		e.i++
		return e.unary()
	case t.kind == 'i':
		e.i++
		if v, ok := e.ident(t.text); ok {
			return v, nil
		}
		return 0, fmt.Errorf("%s is not a constant", t.text)
	}
	return 0, fmt.Errorf("unexpected %q", t.text)
}
