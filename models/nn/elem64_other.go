//go:build !amd64

package nn

func fill64(*float64, int, float64) { panic("nn: fill64 without AVX") }

func addConst64(*float64, int, float64) { panic("nn: addConst64 without AVX") }

func relu64(*float64, *float64, int) { panic("nn: relu64 without AVX") }

func reluMaskVec64(*float64, *float64, *float64, int) { panic("nn: reluMaskVec64 without AVX") }

func sumRows4(int, *float64, int, *[4][4]float64) { panic("nn: sumRows4 without AVX") }
