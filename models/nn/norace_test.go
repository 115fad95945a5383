//go:build !race

package nn

const raceBuild = false
