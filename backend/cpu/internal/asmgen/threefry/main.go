// Command threefry generates backend/cpu/threefry_amd64.s and its Go
// stubs: Threefry-2x32 (20 rounds) over 8 (AVX2) or 16 (AVX-512) blocks
// at a time, one block in each 32-bit lane. Run it through go generate in
// backend/cpu.
//
// A call hashes the n blocks (p+j, q+j), j < n (n a multiple of the lane
// count), under one key, writing the first words to y0 and the second to
// y1: the pairs of random.go's layout.
package main

import (
	"bytes"
	"flag"
	"log"
	"os"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/fathom-go/fathom/backend/cpu/internal/asmgen"
)

var rotations = [2][4]uint64{{13, 15, 26, 6}, {17, 29, 16, 24}}

func gen(name string, zmm bool, iota Mem) {
	lanes := 8
	if zmm {
		lanes = 16
	}
	TEXT(name, NOSPLIT, "func(key *[2]uint32, p, q uint32, y0, y1 *uint32, n int)")
	Doc(name+" hashes the n blocks (p+j, q+j), j < n, under key into y0[j] and y1[j]; n is a multiple of", "the lane count.")
	Pragma("noescape")
	newV := func() VecVirtual {
		if zmm {
			return ZMM()
		}
		return YMM()
	}
	keyp := Load(Param("key"), GP64())
	k0, k1, k2 := GP32(), GP32(), GP32()
	MOVL(Mem{Base: keyp}, k0)
	MOVL(Mem{Base: keyp, Disp: 4}, k1)
	MOVL(k0, k2)
	XORL(k1, k2)
	XORL(U32(0x1BD11BDA), k2)
	bcast := func(r GPVirtual) VecVirtual {
		x := XMM()
		MOVD(r, x)
		v := newV()
		VPBROADCASTD(x, v)
		return v
	}
	ks := []VecVirtual{bcast(k0), bcast(k1), bcast(k2)}
	// the second word's injections: ks[(g+2)%3] + g+1
	var injB [5]VecVirtual
	for g := range 5 {
		t := GP32()
		MOVL([]GPVirtual{k0, k1, k2}[(g+2)%3], t)
		ADDL(U32(g+1), t)
		injB[g] = bcast(t)
	}
	pr, qr := GP32(), GP32()
	Load(Param("p"), pr)
	Load(Param("q"), qr)
	pv, qv := bcast(pr), bcast(qr)
	io := newV()
	mov := func(src, dst Op) {
		if zmm {
			VMOVDQU32(src, dst)
		} else {
			VMOVDQU(src, dst)
		}
	}
	mov(iota, io)
	VPADDD(io, pv, pv)
	VPADDD(io, qv, qv)
	t := GP32()
	MOVL(U32(lanes), t)
	step := bcast(t)
	y0, y1 := Load(Param("y0"), GP64()), Load(Param("y1"), GP64())
	n := Load(Param("n"), GP64())
	Label("loop")
	CMPQ(n, Imm(0))
	JLE(LabelRef("done"))
	a, b, tmp := newV(), newV(), newV()
	VPADDD(ks[0], pv, a)
	VPADDD(ks[1], qv, b)
	for g := range 5 {
		for _, r := range rotations[g%2] {
			VPADDD(b, a, a)
			if zmm { // one rotate instruction
				VPROLD(U8(r), b, b)
			} else {
				VPSLLD(U8(r), b, tmp)
				VPSRLD(U8(32-r), b, b)
				VPOR(tmp, b, b)
			}
			if zmm {
				VPXORD(a, b, b)
			} else {
				VPXOR(a, b, b)
			}
		}
		VPADDD(ks[(g+1)%3], a, a)
		VPADDD(injB[g], b, b)
	}
	mov(a, Mem{Base: y0})
	mov(b, Mem{Base: y1})
	VPADDD(step, pv, pv)
	VPADDD(step, qv, qv)
	ADDQ(U32(4*lanes), y0)
	ADDQ(U32(4*lanes), y1)
	SUBQ(U32(lanes), n)
	JMP(LabelRef("loop"))
	Label("done")
	VZEROUPPER()
	RET()
}

func main() {
	Package("github.com/fathom-go/fathom/backend/cpu")
	ConstraintExpr("amd64,!noasm")
	// the lane numbers 0 .. 15, added to the first counters
	iota := GLOBL("threefry_iota", RODATA|NOPTR)
	for i := range 16 {
		DATA(4*i, U32(i))
	}
	gen("threefryAVX2", false, iota)
	gen("threefryAVX512", true, iota)
	Generate()
	for _, name := range []string{"out", "stubs"} {
		if file := flag.Lookup(name).Value.String(); file != "" && file != "-" {
			setHeader(file)
		}
	}
}

// setHeader replaces the first line of file, avo's header, with
// asmgen.Header's.
func setHeader(file string) {
	b, err := os.ReadFile(file)
	if err != nil {
		log.Fatal(err)
	}
	_, rest, _ := bytes.Cut(b, []byte("\n"))
	if err := os.WriteFile(file, append([]byte(asmgen.Header("threefry")+"\n"), rest...), 0o644); err != nil {
		log.Fatal(err)
	}
}
