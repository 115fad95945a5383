//go:build !amd64

package nn

func fill32(*float32, int, float32) { panic("nn: fill32 without AVX") }

func addConst32(*float32, int, float32) { panic("nn: addConst32 without AVX") }

func relu32(*float32, *float32, int) { panic("nn: relu32 without AVX") }

func reluMaskVec32(*float32, *float32, *float32, int) { panic("nn: reluMaskVec32 without AVX") }

func l2GradVec32(*float32, *float32, int, float32, *[8]float64) { panic("nn: l2GradVec32 without AVX") }

func sumRows4x32(int, *float32, int, *[4][4]float32) { panic("nn: sumRows4x32 without AVX") }
