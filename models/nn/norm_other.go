//go:build !amd64

package nn

const normVector = false

func normOut(int, *float64, *float64, float64, float64, float64, float64) {
	panic("nn: normOut without AVX")
}

func normProj(int, *float64, *float64, float64, float64, float64, float64) {
	panic("nn: normProj without AVX")
}

func normTangent(int, *float64, *float64, *float64, *float64, float64, float64, float64, float64, float64, float64) {
	panic("nn: normTangent without AVX")
}

func normRProj(int, *float64, *float64, *float64, *float64, float64, float64, float64, float64, float64, float64, float64) {
	panic("nn: normRProj without AVX")
}
