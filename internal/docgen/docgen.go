package docgen

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"hgpsim/internal/registry"
)

// Files returns the documents under the module root whose regions are
// generated: README.md and the Markdown files of docs.
func Files(root string) ([]string, error) {
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	return append([]string{filepath.Join(root, "README.md")}, docs...), nil
}

// Command is what to run in the module root to regenerate the files (the
// root package's go:generate line runs tools/docgen).
const Command = "go generate ."

var (
	tableStart = regexp.MustCompile(`<!-- kinds (\S+) -->\n`)
	namesStart = regexp.MustCompile(`<!-- names (\S+) -->`)
)

const (
	tableEnd = "<!-- end kinds -->\n"
	namesEnd = "<!-- end names -->"
)

// Rewrite returns doc with every generated region rewritten from the
// registries in axes, and the axes whose table doc carries. A region whose
// end marker is missing or whose axis is not registered is an error naming
// it.
func Rewrite(doc string, axes []registry.Axis) (string, []string, error) {
	byName := map[string]registry.Axis{}
	for _, a := range axes {
		byName[a.Name()] = a
	}
	var tables []string
	out, err := rewrite(doc, tableStart, tableEnd, byName, func(a registry.Axis) string {
		tables = append(tables, a.Name())
		return registry.Markdown(a)
	})
	if err != nil {
		return "", nil, err
	}
	out, err = rewrite(out, namesStart, namesEnd, byName, func(a registry.Axis) string {
		names := a.Kinds()
		for i, n := range names {
			names[i] = "`" + n + "`"
		}
		return fmt.Sprintf("<!-- names %s -->%s%s", a.Name(), strings.Join(names, ", "), namesEnd)
	})
	return out, tables, err
}

// rewrite replaces each region from a match of start to the next end
// (both included) with render of its axis.
func rewrite(doc string, start *regexp.Regexp, end string, axes map[string]registry.Axis, render func(registry.Axis) string) (string, error) {
	var b strings.Builder
	pos := 0
	starts := start.FindAllStringSubmatchIndex(doc, -1)
	for k, loc := range starts {
		name := doc[loc[2]:loc[3]]
		line := strings.Count(doc[:loc[0]], "\n") + 1
		a, ok := axes[name]
		if !ok {
			return "", fmt.Errorf("line %d: a region for axis %q, which is not registered", line, name)
		}
		e := strings.Index(doc[loc[1]:], end)
		if e < 0 {
			return "", fmt.Errorf("line %d: the region of axis %s has no %q", line, name, strings.TrimSpace(end))
		}
		e += loc[1]
		if k+1 < len(starts) && starts[k+1][0] < e {
			return "", fmt.Errorf("line %d: the region of axis %s ends after the next region starts", line, name)
		}
		b.WriteString(doc[pos:loc[0]])
		b.WriteString(render(a))
		pos = e + len(end)
	}
	b.WriteString(doc[pos:])
	return b.String(), nil
}
