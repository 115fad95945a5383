//go:build !amd64

package vec

// tanhImpls is Tanh alone: there are no kernels on this architecture.
func tanhImpls() []tanhImpl { return []tanhImpl{{"Tanh", Tanh}} }
