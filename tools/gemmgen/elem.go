package main

import "fmt"

// elem is the element type of a kernel: every family is written once per
// type from one template, the register tiles the same and only the lanes a
// register holds (and so the columns a tile covers) different.
type elem struct {
	size   int    // bytes
	shift  int    // log2(size): strides come in elements
	pk     string // the packed instructions' suffix, PD or PS
	sc     string // the scalar ones', SD or SS
	prefix string // of the kernels' names: "" for float64, "s" for float32
	goType string
}

var (
	f64 = elem{8, 3, "PD", "SD", "", "float64"}
	f32 = elem{4, 2, "PS", "SS", "s", "float32"}
)

// lanes is the number of elements in a YMM register.
func (e elem) lanes() int { return 32 / e.size }

// name prefixes a kernel's name with the type's prefix.
func (e elem) name(format string, args ...any) string {
	return e.prefix + fmt.Sprintf(format, args...)
}

// rowAddr returns the address of row r of a matrix whose rows 0–2 start at
// base0 + r·stride and rows 3–5 at base3 + (r−3)·stride.
func rowAddr(off, r int, base0, base3, stride string) string {
	base := base0
	if r >= 3 {
		base, r = base3, r-3
	}
	o := ""
	if off != 0 {
		o = fmt.Sprint(off)
	}
	switch r {
	case 0:
		return fmt.Sprintf("%s(%s)", o, base)
	case 1:
		return fmt.Sprintf("%s(%s)(%s*1)", o, base, stride)
	default:
		return fmt.Sprintf("%s(%s)(%s*2)", o, base, stride)
	}
}
