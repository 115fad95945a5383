//go:build !amd64

package nn

func maxPool2Rows32(int, int, *float32, *float32, *int32, int, int) {
	panic("nn: maxPool2Rows32 without AVX2")
}

func scatterPool2Rows32(int, int, *float32, *int32, *float32, int, int) {
	panic("nn: scatterPool2Rows32 without AVX2")
}
