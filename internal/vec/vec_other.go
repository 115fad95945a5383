//go:build !amd64

package vec

import "gonum.org/v1/gonum/floats"

func addScaled(dst []float64, alpha float64, s []float64) { floats.AddScaled(dst, alpha, s) }
