//go:build !amd64

package nn

func maxPool2Row32(int, *float32, *float32, *float32, *int32, int, int) {
	panic("nn: maxPool2Row32 without AVX2")
}

func scatterPool2Row32(int, *float32, *int32, *float32, *float32, int, int) {
	panic("nn: scatterPool2Row32 without AVX2")
}
