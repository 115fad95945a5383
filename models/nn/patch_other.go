//go:build !amd64

package nn

const patchVector = false

func patchRow5(int, *float64, *float64, *int) { panic("nn: patchRow5 without AVX") }

func copyRuns(int, int, *float64, int, *float64, int) { panic("nn: copyRuns without AVX") }

func addRuns(int, int, *float64, int, *float64, int) { panic("nn: addRuns without AVX") }

func patchRows32(int, int, int, *float32, int, *float32, *int) {
	panic("nn: patchRows32 without AVX")
}

func copyRuns32(int, int, *float32, int, *float32, int) { panic("nn: copyRuns32 without AVX") }

func addRuns32(int, int, *float32, int, *float32, int) { panic("nn: addRuns32 without AVX") }
