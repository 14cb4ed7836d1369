package metal_test

// Linux stands in for Apple's Metal compiler here. The MSL harness
// compiles kernels as C++, which accepts things Metal rejects; two checks
// (package mslcpu) close the gap, and the harness runs both on every
// library it compiles:
//
//   - mslcpu.Lint: the spec's rules on kernel parameters (attribute types,
//     component counts and pairings, buffer indices), threadgroup memory
//     per instantiation, no double, no recursion, no variable-length
//     arrays (mslcpu.LintRules lists them);
//   - mslcpu.SyntaxCheck: a syntax-only compile in which device, constant
//     and threadgroup are distinct clang address spaces.
//
// testdata/msllint holds a failing case for every rule (among them the
// two kernels of issue 24, bad_gemm.metal and bad_sort_block.metal) and
// passing ones (their fixed copies); the first lines of each file say
// what it expects:
//
//	// want-lint: rule rule ... | ok
//	// want-syntax: ok | error "substring of the compiler's message"

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/fathom-go/fathom/backend/metal"
	"github.com/fathom-go/fathom/backend/metal/internal/mslcpu"
)

// embeddedLibraries returns the embedded kernel libraries, each with the
// source the host compiles.
func embeddedLibraries(t *testing.T) []mslcpu.Library {
	t.Helper()
	var libs []mslcpu.Library
	for _, name := range metal.Libraries() {
		src, err := metal.LibrarySource(name)
		if err != nil {
			t.Fatal(err)
		}
		libs = append(libs, mslcpu.Library{Name: name, Source: src})
	}
	if len(libs) < 10 {
		t.Fatalf("only %d embedded libraries", len(libs))
	}
	return libs
}

// lintCase is a file of testdata/msllint with its expectations.
type lintCase struct {
	lib        mslcpu.Library
	wantLint   []string // rules, sorted; empty: no finding
	syntaxErr  string   // "": the syntax-only compile passes
	syntaxWant bool
}

var wantRE = regexp.MustCompile(`(?m)^// want-(lint|syntax): (.*)$`)

// lintCases reads testdata/msllint, each file behind the prelude of the
// embedded libraries (kernels/common.h) as the host compiles them.
func lintCases(t *testing.T) []lintCase {
	t.Helper()
	common, err := os.ReadFile("kernels/common.h")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("testdata/msllint/*.metal")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/msllint/*.metal: %v", err)
	}
	var cs []lintCase
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(f)
		c := lintCase{lib: mslcpu.Library{Name: name,
			Source: "#line 1 \"common.h\"\n" + string(common) + "#line 1 \"" + name + "\"\n" + string(body)}}
		for _, m := range wantRE.FindAllStringSubmatch(string(body), -1) {
			v := strings.TrimSpace(m[2])
			switch {
			case m[1] == "lint" && v != "ok":
				c.wantLint = strings.Fields(v)
				sort.Strings(c.wantLint)
			case m[1] == "syntax":
				c.syntaxWant = true
				if v != "ok" {
					c.syntaxErr = strings.Trim(strings.TrimPrefix(v, "error "), `"`)
				}
			}
		}
		if !c.syntaxWant {
			t.Fatalf("%s: no want-syntax line", f)
		}
		cs = append(cs, c)
	}
	return cs
}

func ruleSet(fs []mslcpu.Finding) []string {
	var rules []string
	for _, f := range fs {
		if !slices.Contains(rules, f.Rule) {
			rules = append(rules, f.Rule)
		}
	}
	sort.Strings(rules)
	return rules
}

// TestMSLLintEmbeddedLibraries lints every kernel of every embedded
// library, and checks that the lint sees exactly the kernels the harness
// registers (so that no kernel escapes it).
func TestMSLLintEmbeddedLibraries(t *testing.T) {
	clang := mslcpu.Available() == nil
	for _, lib := range embeddedLibraries(t) {
		t.Run(lib.Name, func(t *testing.T) {
			r := mslcpu.Lint(lib)
			for _, f := range r.Findings {
				t.Errorf("%s", f)
			}
			if len(r.Kernels) == 0 {
				t.Fatalf("the lint found no kernel in %s", lib.Name)
			}
			if !clang {
				return
			}
			names, err := mslcpu.Kernels(lib)
			if err != nil {
				t.Fatal(err)
			}
			var linted []string
			for _, k := range r.Kernels {
				linted = append(linted, k.Name)
			}
			sort.Strings(names)
			sort.Strings(linted)
			if !slices.Equal(names, linted) {
				t.Errorf("the lint saw %d kernels and the harness registers %d:\nlint only: %v\nharness only: %v",
					len(linted), len(names), minus(linted, names), minus(names, linted))
			}
		})
	}
}

func minus(a, b []string) []string {
	var out []string
	for _, s := range a {
		if !slices.Contains(b, s) {
			out = append(out, s)
		}
	}
	return out
}

// TestKernelsDeclareTheirLargestThreadgroup pins the
// [[max_total_threads_per_threadgroup]] of the kernels whose plans use
// large or fixed threadgroups: the harness refuses a launch above the
// declared number, as a Metal pipeline would, so a plan that asks for
// more (or a kernel that declares less) fails here. Kernels not listed
// declare nothing (Metal's limit is then the pipeline's, at most 1024).
func TestKernelsDeclareTheirLargestThreadgroup(t *testing.T) {
	want := map[string]int{
		"norm_rows":      1024, // normPlan in norm.go: 256, or 1024 above 8192 elements
		"gemm":           256,  // 16x16, the layout of its tiles
		"reduce_cols":    256,  // 32x8, the layout of its accumulators
		"sort_block":     512,  // sortThreads in sort.go
		"hadamard_lines": 256,  // HadamardTransform in hadamard.go
		"fft_lines":      256,  // the threadgroup of FFT in fft.go
		"conv_wgrad":     256,  // WG_VT in conv_wgrad.metal: 16x16 virtual threads of 4x4
		"reduce_rows":    1024, // lineGrid in reduce.go: 256, or 1024 above 8192 elements
		"arg_reduce":     1024,
		"scan_lines":     1024,
		"softmax_lines":  1024,
	}
	seen := map[string]bool{}
	for _, lib := range embeddedLibraries(t) {
		for _, k := range mslcpu.Lint(lib).Kernels {
			if k.MaxThreads != want[k.Function] {
				t.Errorf("%s (%s in %s) declares max_total_threads_per_threadgroup %d, want %d",
					k.Name, k.Function, lib.Name, k.MaxThreads, want[k.Function])
			}
			seen[k.Function] = true
		}
	}
	for f := range want {
		if !seen[f] {
			t.Errorf("no kernel function %s", f)
		}
	}
}

// TestMSLLintCatchesWhatMetalRejects runs the lint over testdata/msllint:
// each bad_*.metal breaks the rules its header names (and no other), and
// each good_*.metal none.
func TestMSLLintCatchesWhatMetalRejects(t *testing.T) {
	rules := map[string]bool{}
	for _, c := range lintCases(t) {
		got := ruleSet(mslcpu.Lint(c.lib).Findings)
		if !slices.Equal(got, c.wantLint) {
			var msgs []string
			for _, f := range mslcpu.Lint(c.lib).Findings {
				msgs = append(msgs, "\n\t"+f.String())
			}
			t.Errorf("%s: lint rules %v, want %v%s", c.lib.Name, got, c.wantLint, strings.Join(msgs, ""))
		}
		for _, r := range got {
			rules[r] = true
		}
	}
	// Every rule but parse has a failing case.
	for r := range mslcpu.LintRules {
		if !rules[r] && r != "parse" {
			t.Errorf("no testdata/msllint case breaks rule %s", r)
		}
	}
}

func requireClangForLint(t *testing.T) {
	t.Helper()
	if err := mslcpu.Available(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the syntax-only MSL check needs clang++ on CI: %v", err)
		}
		t.Skipf("skipping: %v", err)
	}
}

// TestMSLSyntaxOnlyMode compiles every embedded library, and the files of
// testdata/msllint, in msl_compat.h's syntax-only mode (device, constant
// and threadgroup distinct address spaces, no double, no variable-length
// arrays), where passing a pointer of one address space for another fails
// as it does on Metal.
func TestMSLSyntaxOnlyMode(t *testing.T) {
	requireClangForLint(t)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	check := func(name string, lib mslcpu.Library, wantErr string) {
		defer wg.Done()
		sem <- struct{}{}
		defer func() { <-sem }()
		err := mslcpu.SyntaxCheck(lib)
		switch {
		case wantErr == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case wantErr != "" && err == nil:
			t.Errorf("%s: the syntax-only compile passed, want an error with %q", name, wantErr)
		case wantErr != "" && !strings.Contains(err.Error(), wantErr):
			t.Errorf("%s: error without %q:\n%v", name, wantErr, err)
		}
	}
	for _, lib := range embeddedLibraries(t) {
		wg.Add(1)
		go check(lib.Name, lib, "")
	}
	for _, c := range lintCases(t) {
		wg.Add(1)
		go check("testdata/msllint/"+c.lib.Name, c.lib, c.syntaxErr)
	}
	wg.Wait()
}

// TestHarnessRefusesWhatMetalRejects: the harness runs both checks on the
// libraries it compiles, so a plan whose kernels Metal would reject fails
// its conformance case here too.
func TestHarnessRefusesWhatMetalRejects(t *testing.T) {
	requireClangForLint(t)
	cases := map[string]string{}
	for _, c := range lintCases(t) {
		cases[c.lib.Name] = c.lib.Source
	}
	for name, want := range map[string]string{
		"bad_gemm.metal":          "[attr-components]",
		"bad_address_space.metal": "address space",
	} {
		err := mslcpu.Prepare(mslcpu.Library{Name: "msllint-" + name, Source: cases[name]})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: Prepare error %v, want one with %q", name, err, want)
		}
	}
}
