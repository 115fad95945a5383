package main

import (
	"fmt"
	"os"

	_ "hgpsim/experiments" // every experiment, as the hgpsim binary links it
	"hgpsim/internal/docgen"
	"hgpsim/internal/registry"
	_ "hgpsim/scenarios" // every algorithm family, link by link (optim/families)
)

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	if err := run(root); err != nil {
		fmt.Fprintln(os.Stderr, "docgen:", err)
		os.Exit(1)
	}
}

func run(root string) error {
	files, err := docgen.Files(root)
	if err != nil {
		return err
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		out, _, err := docgen.Rewrite(string(b), registry.Axes())
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if out != string(b) {
			if err := os.WriteFile(f, []byte(out), 0o644); err != nil {
				return err
			}
			fmt.Println("docgen: wrote", f)
		}
	}
	return nil
}
