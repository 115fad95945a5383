package experiments

import (
	"fmt"

	"hgpsim/internal/rng"
	"hgpsim/models"
	"hgpsim/scenarios"
)

// oneDimData returns each client's one-dimensional two-class data: two
// classes of the synthetic generator, or — with data.kind fashion-mnist,
// as in the paper with MNIST — the mean pixel of two classes (h.Classes)
// of the real images, relabelled 0/1 and split among clients at random.
func oneDimData(sc scenarios.Scenario, h *HGPError, seed uint64) ([]models.ClientData, error) {
	n := sc.Clients
	if sd, ok := sc.Data.Source.Params.(*models.SyntheticData); ok {
		return models.Synthetic(models.SyntheticSpec{Clients: n, Classes: 2, Features: 1,
			Train: sd.Train, Val: sd.Val, Test: sd.Test, Alpha: sd.Alpha,
			Separation: sd.Separation, Shift: sd.Shift, Noise: sd.Noise}, seed)
	}
	dir := sc.Data.Source.Params.(*models.IDXData).Dir
	src := models.FashionMNIST(dir)
	if sc.Data.Source.Name == "mnist" {
		src = models.MNIST(dir)
	}
	train, _, err := src.Load()
	if err != nil {
		return nil, err
	}
	pair := h.Classes
	var rows []int
	for i, y := range train.Y {
		if y == pair[0] || y == pair[1] {
			rows = append(rows, i)
		}
	}
	r := rng.New(seed, rng.Global, rng.PurposePartition)
	r.Shuffle(len(rows), func(a, b int) { rows[a], rows[b] = rows[b], rows[a] })
	per := h.Train + h.Val + h.Test
	if len(rows) < n*per {
		return nil, fmt.Errorf("classes %v have %d images, %d clients need %d", pair, len(rows), n, n*per)
	}
	take := func(rs []int) *models.Dataset {
		d := &models.Dataset{X: make([]float64, len(rs)), Y: make([]int, len(rs)), N: len(rs), D: 1, C: 2}
		for k, row := range rs {
			s := 0.0
			for _, v := range train.Row(row) {
				s += v
			}
			d.X[k] = s / float64(train.D)
			if train.Y[row] == pair[1] {
				d.Y[k] = 1
			}
		}
		return d
	}
	out := make([]models.ClientData, n)
	for i := range out {
		rs := rows[i*per : (i+1)*per]
		out[i] = models.ClientData{Train: take(rs[:h.Train]),
			Val:  take(rs[h.Train : h.Train+h.Val]),
			Test: take(rs[h.Train+h.Val:])}
	}
	return out, nil
}

// l2Rate returns the L2 rate of a model kind's parameters.
func l2Rate(a models.Architecture) float64 {
	switch m := a.(type) {
	case *models.SoftmaxSpec:
		return m.L2
	case *models.LogisticSpec:
		return m.L2
	case *models.MLPSpec:
		return m.L2
	}
	return 0
}
