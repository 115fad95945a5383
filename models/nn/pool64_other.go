//go:build !amd64

package nn

func maxPool2Row64(int, *float64, *float64, *float64, *int32, int, int) {
	panic("nn: maxPool2Row64 without AVX2")
}

func scatterPool2Row64(int, *float64, *int32, *float64, *float64, int, int) {
	panic("nn: scatterPool2Row64 without AVX2")
}
