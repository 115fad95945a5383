package registry

import (
	"fmt"
	"strings"
)

// Text describes an axis for `hgpsim list`: every kind with its
// description and parameters.
func Text(a Axis) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (selected by %s):\n", a.Name(), a.Key())
	for _, kind := range a.Kinds() {
		doc, params, _ := a.Describe(kind)
		fmt.Fprintf(&b, "\n  %s\n", kind)
		for _, line := range wrap(doc, 72) {
			fmt.Fprintf(&b, "      %s\n", line)
		}
		for _, p := range params {
			fmt.Fprintf(&b, "    %s (%s, default %s): %s\n", p.Key, p.Type, p.Default, p.Doc)
		}
	}
	return b.String()
}

// Markdown describes an axis as the table docs/scenarios.md carries, between
// the markers <!-- kinds AXIS --> and <!-- end kinds -->.
func Markdown(a Axis) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<!-- kinds %s -->\n", a.Name())
	fmt.Fprintf(&b, "| `%s` | parameters (default) | description |\n|---|---|---|\n", a.Key())
	for _, kind := range a.Kinds() {
		doc, params, _ := a.Describe(kind)
		var ps []string
		for _, p := range params {
			ps = append(ps, fmt.Sprintf("`%s` (%s): %s", p.Key, p.Default, escape(p.Doc)))
		}
		cell := "—"
		if len(ps) > 0 {
			cell = strings.Join(ps, "<br>")
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", kind, cell, escape(doc))
	}
	b.WriteString("<!-- end kinds -->\n")
	return b.String()
}

func escape(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

// wrap breaks s into lines of at most width runes at spaces.
func wrap(s string, width int) []string {
	var lines []string
	var cur []string
	n := 0
	for _, w := range strings.Fields(s) {
		l := len([]rune(w))
		if n > 0 && n+1+l > width {
			lines = append(lines, strings.Join(cur, " "))
			cur, n = nil, 0
		}
		if n > 0 {
			n++
		}
		cur = append(cur, w)
		n += l
	}
	if len(cur) > 0 {
		lines = append(lines, strings.Join(cur, " "))
	}
	return lines
}
