package main

import (
	"errors"
	"fmt"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The layering of the module's packages, bottom up: a package may import
// the packages of the layers below its own, those of its own layer that
// sideways names, the standard library and the third-party modules of its
// layer and the layers below. Anything else is an upward (or sideways)
// import. It is the package table of the design, with each package's
// doc.go saying the same in prose.
var layers = []struct {
	name  string
	pkgs  []string // import paths inside the module ("" is the root)
	third []string // third-party import-path prefixes this layer brings in
}{
	{"internal", []string{"internal/registry", "internal/rng", "internal/fsutil", "internal/testscen",
		"internal/vec", "internal/gemm", "internal/docgen", "internal/codec", "internal/cpuid"},
		[]string{"gonum.org/v1/gonum/", "golang.org/x/sys/"}},
	{"base", []string{"graph", "datasets", "models", "models/nn", "compress"}, nil},
	{"core", []string{"optim"}, nil},
	{"families", []string{"optim/pdbo", "optim/fed", "optim/fbo", "optim/fedbio", "optim/nodeweights",
		"optim/faults", "optim/optimtest"}, nil},
	{"family links", []string{"optim/families"}, nil},
	{"scenarios and transport", []string{"scenarios", "wire", "actors"},
		[]string{"go.yaml.in/yaml/", "google.golang.org/protobuf/", "google.golang.org/grpc", "github.com/asynkron/protoactor-go/"}},
	{"test support", []string{"internal/plugintest"}, nil},
	{"run", []string{"run"}, []string{"github.com/rs/zerolog"}},
	{"report", []string{"report"}, []string{"gonum.org/v1/plot/"}},
	{"experiments and bench", []string{"experiments", "bench"}, nil},
	{"view", []string{"view"}, nil},
	{"commands", []string{"", "tools/docgen", "tools/gemmgen"}, []string{"github.com/spf13/", "github.com/mattn/go-isatty"}},
}

// sideways lists the imports allowed inside one layer.
var sideways = map[string][]string{
	"internal/gemm":     {"internal/vec"},
	"internal/vec":      {"internal/cpuid"},
	"internal/docgen":   {"internal/registry"},
	"models":            {"models/nn", "datasets"},
	"optim/nodeweights": {"optim/fed"},
	"actors":            {"wire"},
}

const module = "hgpsim"

// layerViolations returns what is wrong with imports, the non-test imports
// of each package (module-relative path, "" for the root) as full import
// paths: a package the table does not place, and every import the table
// does not allow.
func layerViolations(imports map[string][]string) []string {
	layerOf := map[string]int{}
	for l, layer := range layers {
		for _, p := range layer.pkgs {
			layerOf[p] = l
		}
	}
	var bad []string
	for pkg, imps := range imports {
		l, ok := layerOf[pkg]
		if !ok {
			bad = append(bad, fmt.Sprintf("%s: a package the layering table does not place", show(pkg)))
			continue
		}
		for _, imp := range imps {
			if why := importProblem(pkg, l, imp, layerOf); why != "" {
				bad = append(bad, fmt.Sprintf("%s (%s) imports %s: %s", show(pkg), layers[l].name, imp, why))
			}
		}
	}
	slices.Sort(bad)
	return bad
}

// importProblem says why package pkg of layer l may not import imp, or ""
// when it may.
func importProblem(pkg string, l int, imp string, layerOf map[string]int) string {
	if rel, ok := strings.CutPrefix(imp, module+"/"); ok || imp == module {
		t, placed := layerOf[rel]
		switch {
		case !placed:
			return "a package the layering table does not place"
		case t < l || slices.Contains(sideways[pkg], rel):
			return ""
		case t == l:
			return "a sideways import within the layer"
		}
		return fmt.Sprintf("an upward import (into layer %s)", layers[t].name)
	}
	if first, _, _ := strings.Cut(imp, "/"); !strings.Contains(first, ".") {
		return "" // the standard library
	}
	for _, layer := range layers[:l+1] {
		for _, prefix := range layer.third {
			if strings.HasPrefix(imp, prefix) || imp == strings.TrimSuffix(prefix, "/") {
				return ""
			}
		}
	}
	return "a third-party module no layer at or below this one brings in"
}

func show(pkg string) string {
	if pkg == "" {
		return module
	}
	return module + "/" + pkg
}

// moduleImports reads the non-test imports of every package of the module
// under the build context ctx.
func moduleImports(t *testing.T, ctx build.Context) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata") {
			return filepath.SkipDir
		}
		p, err := ctx.ImportDir(path, 0)
		var none *build.NoGoError
		if errors.As(err, &none) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		rel := filepath.ToSlash(path)
		if rel == "." {
			rel = ""
		}
		out[rel] = p.Imports
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// No package imports one above it in the layering, on any platform whose
// files differ.
func TestLayering(t *testing.T) {
	if _, err := os.Stat("go.mod"); err != nil {
		t.Fatal("run from the module root:", err)
	}
	for _, target := range [][2]string{{"linux", "amd64"}, {"linux", "arm64"}, {"windows", "amd64"}} {
		ctx := build.Default
		ctx.GOOS, ctx.GOARCH = target[0], target[1]
		imports := moduleImports(t, ctx)
		if len(imports) < 20 {
			t.Fatalf("%s/%s: found only %d packages", target[0], target[1], len(imports))
		}
		for _, v := range layerViolations(imports) {
			t.Errorf("%s/%s: %s", target[0], target[1], v)
		}
	}
}

// The check itself catches an upward, a sideways and an unplaced import
// and an unknown third-party module, and accepts a downward one.
func TestLayeringCatchesViolations(t *testing.T) {
	got := layerViolations(map[string][]string{
		"graph":       {"hgpsim/internal/rng", "hgpsim/optim"},
		"optim/fbo":   {"hgpsim/optim", "hgpsim/optim/fedbio"},
		"optim/fed":   {"hgpsim/nowhere", "example.com/lib", "gonum.org/v1/gonum/floats", "fmt"},
		"experiments": {"hgpsim/run", "hgpsim/report", "gonum.org/v1/plot/vg"},
		"newpkg":      nil,
	})
	want := []string{
		"hgpsim/graph (base) imports hgpsim/optim: an upward import (into layer core)",
		"hgpsim/newpkg: a package the layering table does not place",
		"hgpsim/optim/fbo (families) imports hgpsim/optim/fedbio: a sideways import within the layer",
		"hgpsim/optim/fed (families) imports example.com/lib: a third-party module no layer at or below this one brings in",
		"hgpsim/optim/fed (families) imports hgpsim/nowhere: a package the layering table does not place",
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
