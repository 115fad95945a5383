package main

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"hgpsim/datasets"
	"hgpsim/internal/registry"
)

// dataRoot confines the files a worker reads to one folder: every path a
// scenario names (a data folder, a trace file) must resolve, symbolic
// links followed, inside it.
type dataRoot struct{ dir string }

// newDataRoot resolves dir once, so that a root reached through a link
// compares with resolved paths.
func newDataRoot(dir string) (*dataRoot, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(real); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("%s is not a folder", dir)
	}
	return &dataRoot{dir: real}, nil
}

// check returns an error naming the first path of v (a decoded scenario)
// outside the root. Paths are the string fields tagged yaml "dir" or
// "file", wherever plug-in parameters put them; an empty dir is the
// default Fashion-MNIST folder unless its section reads synthetic data.
func (r *dataRoot) check(v any) error {
	return r.walk(reflect.ValueOf(v), "")
}

func (r *dataRoot) walk(v reflect.Value, at string) error {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return r.walk(v.Elem(), at)
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if err := r.walk(v.Index(i), fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			if err := r.walk(iter.Value(), fmt.Sprintf("%s.%v", at, iter.Key())); err != nil {
				return err
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			fv := v.Field(i)
			where := at
			choice := reflect.PointerTo(fv.Type()).Implements(reflect.TypeFor[registry.Chooser]())
			if name != "" && !(name == "kind" && choice) {
				// A section's kind and its parameters sit side by side
				// (network.links.file, not network.kind.links.file).
				where = strings.TrimPrefix(at+"."+name, ".")
			}
			if fv.Kind() == reflect.String && (name == "dir" || name == "file") {
				p := fv.String()
				if p == "" && name == "dir" && !synthetic(v) {
					p = datasets.FashionMNISTDir
				}
				if p == "" {
					continue
				}
				if err := r.inside(p); err != nil {
					return fmt.Errorf("%s: %w", where, err)
				}
				continue
			}
			if err := r.walk(fv, where); err != nil {
				return err
			}
		}
	}
	return nil
}

// synthetic reports whether a data section reads no files: one of its
// string fields names the synthetic source.
func synthetic(v reflect.Value) bool {
	for i := range v.NumField() {
		if f := v.Field(i); f.Kind() == reflect.String && f.String() == "synthetic" {
			return true
		}
	}
	return false
}

// inside reports whether path resolves inside the root.
func (r *dataRoot) inside(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	real := abs
	if p, err := filepath.EvalSymlinks(abs); err == nil {
		real = p
	}
	rel, err := filepath.Rel(r.dir, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return fmt.Errorf("%s is outside this worker's data root %s (hgpsim worker --data-root)", path, r.dir)
	}
	return nil
}
