package plugintest

import (
	"fmt"
	"reflect"

	"hgpsim/internal/registry"
	"hgpsim/optim"
	"hgpsim/scenarios"
)

// small is a pdbo run of a few rounds on six clients: the base of every
// kind without an example, except algorithms.
const small = `clients: 6
data: {train: 20, val: 10, test: 10}
sgp: {rounds: 30, batch: 8, eval_every: 10}
`

// smallServer is the base of algorithms: their own sections only.
const smallServer = `clients: 4
data: {train: 20, val: 10, test: 10}
`

// selectors say how a scenario names a kind of each axis, as overrides of
// the base; the second result is the base.
var selectors = map[string]func(kind string) ([]string, string){
	"network":  func(k string) ([]string, string) { return []string{"network.kind=" + k}, small },
	"links":    func(k string) ([]string, string) { return []string{"network.links=" + k}, small },
	"failures": func(k string) ([]string, string) { return []string{"network.failures=[{kind: " + k + "}]"}, small },
	"data":     func(k string) ([]string, string) { return []string{"data={kind: " + k + "}"}, small },
	"model":    func(k string) ([]string, string) { return []string{"model.kind=" + k}, small },
	"head":     func(k string) ([]string, string) { return []string{"model.head=" + k}, small },
	// Every estimator accepts an undirected network and needs λ.
	"estimator": func(k string) ([]string, string) {
		return []string{"network.kind=stochastic-undirected", "model.head=label-weights", "hypergradient={estimator: " + k + ", m: 4}"}, small
	},
	"faults":     func(k string) ([]string, string) { return []string{"faults=[{kind: " + k + ", clients: [0]}]"}, small },
	"experiment": func(k string) ([]string, string) { return []string{"experiment={kind: " + k + "}"}, small },
	// The pdbo presets need an outer step.
	"method": func(k string) ([]string, string) { return []string{"method=" + k, "outer.steps=1"}, small },
	"algorithm": func(k string) ([]string, string) {
		sets := []string{"algorithm=" + k}
		if a, err := optim.Algorithms.Lookup(k); err == nil && a.New().Server() {
			sets = append(sets, "network.kind=star")
		}
		return sets, smallServer
	},
}

// Scenario returns the scenario of a kind of axis a, decoded and validated,
// and its source for messages: the kind's example, or the kind named in a
// small run. An axis unknown to this package is an error, so a new axis
// cannot go untested.
func Scenario(a registry.Axis, kind string) (scenarios.Scenario, string, error) {
	if ex := a.Example(kind); ex != "" {
		sc, err := scenarios.Parse(a.Name()+"/"+kind+" example", []byte(ex))
		return sc, ex, err
	}
	sel, ok := selectors[a.Name()]
	if !ok {
		return scenarios.Scenario{}, "", fmt.Errorf("plugintest: no way to name a %s kind in a scenario; add the axis to selectors", a.Name())
	}
	args, base := sel(kind)
	var sets []scenarios.Set
	for _, arg := range args {
		s, err := scenarios.ParseSet(arg)
		if err != nil {
			return scenarios.Scenario{}, "", err
		}
		sets = append(sets, s)
	}
	src := base
	for _, arg := range args {
		src += "# --set " + arg + "\n"
	}
	sc, err := scenarios.ParseWith(a.Name()+"/"+kind, []byte(base), sets)
	return sc, src, err
}

// Selects reports whether sc chooses kind on axis a: a plug-in choice of
// the axis anywhere in the scenario, or, for an axis named by a key of its
// own (method, estimator), a string field under that key.
func Selects(sc scenarios.Scenario, a registry.Axis, kind string) bool {
	found := false
	walk(reflect.ValueOf(&sc).Elem(), "", func(c registry.Chooser) {
		if c.Axis().Name() == a.Name() && c.Kind() == kind {
			found = true
		}
	}, func(key, value string) {
		if a.Key() != "kind" && key == a.Key() && value == kind {
			found = true
		}
	})
	return found
}

// walk calls choice for every plug-in choice in v, including choices
// inside a choice's parameters (a topology's link process), and str for
// every string field with its yaml key.
func walk(v reflect.Value, key string, choice func(registry.Chooser), str func(key, value string)) {
	switch v.Kind() {
	case reflect.String:
		str(key, v.String())
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walk(v.Elem(), key, choice, str)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			walk(v.Index(i), key, choice, str)
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			walk(it.Value(), key, choice, str)
		}
	case reflect.Struct:
		if v.CanAddr() {
			if c, ok := v.Addr().Interface().(registry.Chooser); ok {
				choice(c)
				walk(reflect.ValueOf(c.ParamsValue()), "", choice, str)
				return
			}
		}
		registry.Fields(v, func(_ int, key, _ string, fv reflect.Value) {
			walk(fv, key, choice, str)
		})
	}
}
