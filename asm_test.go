package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Intel cores charge an AVX–SSE transition (or a false dependency on the
// upper halves) for every legacy-SSE instruction that runs while a YMM or
// ZMM register's upper half is live; AMD cores do not, so such a mix is fast
// on one vendor and an order of magnitude slower on the other. The rule the
// module's assembly keeps: a routine that uses any VEX or EVEX instruction
// encodes every SIMD instruction in VEX or EVEX form, and a routine that
// touches YMM or ZMM registers clears their upper halves (VZEROUPPER)
// before every return to Go code.

var (
	// An XMM operand (X0–X31): what makes a non-V mnemonic a legacy-SSE one.
	xmmOperand = regexp.MustCompile(`\bX([0-9]|[12][0-9]|3[01])\b`)
	// A YMM or ZMM operand.
	wideOperand = regexp.MustCompile(`\b[YZ]([0-9]|[12][0-9]|3[01])\b`)
)

// asmInstr is one instruction of a routine, as written.
type asmInstr struct {
	line     int
	mnemonic string
	operands string
}

// asmRoutine is one TEXT symbol's instructions.
type asmRoutine struct {
	name   string
	line   int
	instrs []asmInstr
}

// parseAsm splits Go assembly into its TEXT routines, dropping comments,
// labels and preprocessor lines.
func parseAsm(src []byte) []asmRoutine {
	var routines []asmRoutine
	inBlock := false
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		text := sc.Text()
		if inBlock {
			end := strings.Index(text, "*/")
			if end < 0 {
				continue
			}
			text, inBlock = text[end+2:], false
		}
		if i := strings.Index(text, "/*"); i >= 0 {
			if end := strings.Index(text[i:], "*/"); end >= 0 {
				text = text[:i] + text[i+end+2:]
			} else {
				text, inBlock = text[:i], true
			}
		}
		if i := strings.Index(text, "//"); i >= 0 {
			text = text[:i]
		}
		text = strings.TrimSpace(text)
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		// Labels, possibly followed by an instruction on the same line.
		for {
			i := strings.IndexByte(text, ':')
			if i <= 0 || strings.ContainsAny(text[:i], " \t,()") {
				break
			}
			text = strings.TrimSpace(text[i+1:])
		}
		if text == "" {
			continue
		}
		mnemonic, operands := text, ""
		if i := strings.IndexAny(text, " \t"); i >= 0 {
			mnemonic, operands = text[:i], strings.TrimSpace(text[i:])
		}
		if mnemonic == "TEXT" {
			name, _, _ := strings.Cut(strings.TrimSpace(operands), ",")
			routines = append(routines, asmRoutine{name: name, line: n})
			continue
		}
		if len(routines) == 0 {
			continue // DATA, GLOBL and the like outside a routine
		}
		r := &routines[len(routines)-1]
		r.instrs = append(r.instrs, asmInstr{line: n, mnemonic: mnemonic, operands: operands})
	}
	return routines
}

// checkAsm returns one message per break of the rule above, each naming
// file and line.
func checkAsm(file string, src []byte) []string {
	var problems []string
	for _, r := range parseAsm(src) {
		usesVEX, usesWide := false, false
		for _, in := range r.instrs {
			if strings.HasPrefix(in.mnemonic, "V") {
				usesVEX = true
			}
			if wideOperand.MatchString(in.operands) {
				usesWide = true
			}
		}
		for i, in := range r.instrs {
			if usesVEX && !strings.HasPrefix(in.mnemonic, "V") && xmmOperand.MatchString(in.operands) {
				problems = append(problems, fmt.Sprintf("%s:%d: %s: legacy-SSE %s in a routine that uses VEX/EVEX instructions (use its V form)",
					file, in.line, r.name, in.mnemonic))
			}
			if usesWide && in.mnemonic == "RET" && (i == 0 || r.instrs[i-1].mnemonic != "VZEROUPPER") {
				problems = append(problems, fmt.Sprintf("%s:%d: %s: RET without VZEROUPPER before it in a routine that touches YMM/ZMM registers",
					file, in.line, r.name))
			}
		}
	}
	return problems
}

func TestAssemblyHasNoInstructionSetMix(t *testing.T) {
	var files int
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") && path != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".s") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		for _, p := range checkAsm(path, src) {
			t.Error(p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 {
		t.Fatal("found no .s file in the module: the walk is broken")
	}
}

func TestAssemblyCheckerCatchesMixes(t *testing.T) {
	cases := []struct {
		name, src string
		want      []string // substrings, one per expected problem, in order
	}{
		{"planted MOVSD beside a YMM move", `#include "textflag.h"
TEXT ·f(SB), NOSPLIT, $0-16
	MOVQ a+0(FP), SI
	VMOVUPD (SI), Y0
	MOVSD 32(SI), X1 // the plant
	VMOVUPD Y0, (DI)
	VZEROUPPER
	RET
`, []string{"x.s:5: ·f(SB): legacy-SSE MOVSD"}},
		{"ADDSD after a label, VEX routine on XMM only", `TEXT ·g(SB), NOSPLIT, $0
	VADDSD X0, X1, X1
loop:	ADDSD (SI), X1
	RET
`, []string{"x.s:3: ·g(SB): legacy-SSE ADDSD"}},
		{"missing VZEROUPPER", `TEXT ·h(SB), NOSPLIT, $0
	VXORPD Z1, Z1, Z1
	RET
`, []string{"x.s:3: ·h(SB): RET without VZEROUPPER"}},
		{"all VEX, commented SSE, plain SSE routine", `TEXT ·ok(SB), NOSPLIT, $0
	VMOVSD (SI), X1 // was MOVSD (SI), X1
	/* MOVSD X1, (DI) */
	VMOVUPD Y0, (DI)
	VZEROUPPER
	RET
TEXT ·sse(SB), NOSPLIT, $0
	MOVSD (SI), X1
	ADDSD X1, X2
	RET
`, nil},
	}
	for _, c := range cases {
		got := checkAsm("x.s", []byte(c.src))
		if len(got) != len(c.want) {
			t.Errorf("%s: %d problems %q, want %d", c.name, len(got), got, len(c.want))
			continue
		}
		for i := range got {
			if !strings.Contains(got[i], c.want[i]) {
				t.Errorf("%s: problem %q does not name %q", c.name, got[i], c.want[i])
			}
		}
	}
}
