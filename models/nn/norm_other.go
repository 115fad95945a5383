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

const normLanes = false

func normProjG(int, *float64, *float64, *float64, float64, float64, float64, float64, float64) {
	panic("nn: normProjG without AVX")
}

func normTangentX(int, *float64, *float64, *float64, *float64, *float64, float64, float64, float64, float64, float64, float64, float64) {
	panic("nn: normTangentX without AVX")
}

func normSum8(int, int, *float64, *[8][4]float64) { panic("nn: normSum8 without AVX") }

func normSqDev8(int, int, *float64, *[8][4]float64, *[8][4]float64) {
	panic("nn: normSqDev8 without AVX")
}

func normBackSums8(*float64, int, int, *float64, *float64, *[3][8]float64, *[4][8]float64) {
	panic("nn: normBackSums8 without AVX-512")
}

func normRFwdSums8(*float64, int, int, *float64, *float64, *[2][8]float64, *[2][8]float64) {
	panic("nn: normRFwdSums8 without AVX-512")
}

func normOut32(int, *float32, *float32, float32, float32, float32, float32) {
	panic("nn: normOut32 without AVX")
}

func normProj32(int, *float32, *float32, float32, float32, float32, float32) {
	panic("nn: normProj32 without AVX")
}

func normTangent32(int, *float32, *float32, *float32, *float32, float32, float32, float32, float32, float32, float32) {
	panic("nn: normTangent32 without AVX")
}

func normRProj32(int, *float32, *float32, *float32, *float32, float32, float32, float32, float32, float32, float32, float32) {
	panic("nn: normRProj32 without AVX")
}

func normSum8x32(int, int, *float32, *[8][4]float32) { panic("nn: normSum8x32 without AVX") }

func normSqDev8x32(int, int, *float32, *[8][4]float32, *[8][4]float32) {
	panic("nn: normSqDev8x32 without AVX")
}

func normTangentX32(int, *float32, *float32, *float32, *float32, *float32, float32, float32, float32, float32, float32, float32, float32) {
	panic("nn: normTangentX32 without AVX")
}

func normRFwdSums8x32(*float32, int, int, *float32, *float32, *[2][8]float32, *[2][8]float32) {
	panic("nn: normRFwdSums8x32 without AVX")
}

func normRBackSums8x32(*float32, int, int, *float32, *float32, *float32, *float32, *[2][8]float32, *[7][8]float32) {
	panic("nn: normRBackSums8x32 without AVX-512")
}

func normRProjG32(int, *float32, *float32, *float32, *float32, *float32, *float32, float32, float32, float32, float32, float32, float32, float32, float32, float32) {
	panic("nn: normRProjG32 without AVX")
}
