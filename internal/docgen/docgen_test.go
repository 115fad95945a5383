package docgen

import (
	"strings"
	"testing"

	"hgpsim/internal/registry"
)

type colour interface{ Hue() int }

type red struct {
	Shade int `yaml:"shade" doc:"how dark, 0 … 9"`
}

func (*red) Hue() int { return 0 }

var colours = registry.New[colour]("colour", "kind")

func init() {
	colours.Register("red", "A warm colour.", func() colour { return &red{Shade: 3} })
	colours.Register("blue", "A cold colour.", func() colour { return &red{} })
}

// A region is replaced, end marker included, by the registry's table or
// list, and the text around it is kept; a stale region is brought up to
// date and a current one left as is.
func TestRewrite(t *testing.T) {
	axes := []registry.Axis{colours}
	doc := "# Colours\n\n<!-- kinds colour -->\n| stale |\n<!-- end kinds -->\n\nSee <!-- names colour -->`red`<!-- end names --> above.\n"
	out, tables, err := Rewrite(doc, axes)
	if err != nil {
		t.Fatal(err)
	}
	want := "# Colours\n\n" + registry.Markdown(colours) + "\nSee <!-- names colour -->`blue`, `red`<!-- end names --> above.\n"
	if out != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
	if len(tables) != 1 || tables[0] != "colour" {
		t.Errorf("tables %v, want [colour]", tables)
	}
	if !strings.Contains(out, "| `red` | `shade` (3): how dark, 0 … 9 | A warm colour. |") {
		t.Errorf("the table lacks red's row:\n%s", out)
	}
	again, _, err := Rewrite(out, axes)
	if err != nil || again != out {
		t.Errorf("a current document changed on a second rewrite (%v)", err)
	}
}

// Broken markers are errors that say where.
func TestRewriteRefuses(t *testing.T) {
	axes := []registry.Axis{colours}
	for doc, want := range map[string]string{
		"a\n<!-- kinds colour -->\n| x |\n":                                  "line 2: the region of axis colour has no",
		"<!-- kinds shape -->\n<!-- end kinds -->\n":                         `line 1: a region for axis "shape", which is not registered`,
		"<!-- kinds colour -->\n<!-- kinds colour -->\n<!-- end kinds -->\n": "line 1: the region of axis colour ends after the next region starts",
		"<!-- names colour -->`red`\n":                                       "has no \"<!-- end names -->\"",
	} {
		if _, _, err := Rewrite(doc, axes); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", doc, err, want)
		}
	}
}
