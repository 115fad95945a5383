package fedbio

import "hgpsim/optim"

// ClientResult is what a client reports when a phase ends: its mislabel
// detection counts (positive = label changed, predicted when λ < 0.5),
// its number of samples and its λ.
type ClientResult struct {
	TP, FP, FN, N int
	Weights       []float64
}

// ServerResult is what the server reports when a phase ends: what it
// received, measured (uploads delivered to it; hyper-gradient uploads
// apart, with the length of the last), and the global model.
type ServerResult struct {
	UploadBytes, UploadMessages           int64
	HyperUploadBytes, HyperUploadMessages int64
	HyperMessageFloats                    int
	X                                     []float64
}

// The names under which the results travel in optim.Result, the one place
// that knows them.
const (
	keyTP, keyFP, keyFN, keyN = "tp", "fp", "fn", "n"
	keyWeights                = "weights"
	keyUploadBytes            = "upload_bytes"
	keyUploadMessages         = "upload_messages"
	keyHyperUploadBytes       = "hyper_upload_bytes"
	keyHyperUploadMessages    = "hyper_upload_messages"
	keyHyperMessageFloats     = "hyper_message_floats"
	keyX                      = "x"
)

// Result returns r as the optim.Result a client reports.
func (r ClientResult) Result() optim.Result {
	return optim.Result{Values: map[string]float64{keyTP: float64(r.TP), keyFP: float64(r.FP), keyFN: float64(r.FN), keyN: float64(r.N)},
		Vectors: map[string][]float64{keyWeights: r.Weights}}
}

// ClientResultOf reads what ClientResult.Result wrote.
func ClientResultOf(r optim.Result) ClientResult {
	v := r.Values
	return ClientResult{TP: int(v[keyTP]), FP: int(v[keyFP]), FN: int(v[keyFN]), N: int(v[keyN]), Weights: r.Vectors[keyWeights]}
}

// Result returns r as the optim.Result the server reports.
func (r ServerResult) Result() optim.Result {
	return optim.Result{Values: map[string]float64{
		keyUploadBytes: float64(r.UploadBytes), keyUploadMessages: float64(r.UploadMessages),
		keyHyperUploadBytes: float64(r.HyperUploadBytes), keyHyperUploadMessages: float64(r.HyperUploadMessages),
		keyHyperMessageFloats: float64(r.HyperMessageFloats),
	}, Vectors: map[string][]float64{keyX: r.X}}
}

// ServerResultOf reads what ServerResult.Result wrote.
func ServerResultOf(r optim.Result) ServerResult {
	v := r.Values
	return ServerResult{UploadBytes: int64(v[keyUploadBytes]), UploadMessages: int64(v[keyUploadMessages]),
		HyperUploadBytes: int64(v[keyHyperUploadBytes]), HyperUploadMessages: int64(v[keyHyperUploadMessages]),
		HyperMessageFloats: int(v[keyHyperMessageFloats]), X: r.Vectors[keyX]}
}

// F1 returns the F1 score of mislabel detection from the clients' results
// (zero when there is nothing to detect or nothing was predicted).
func F1(results []ClientResult) (f1, precision, recall float64) {
	var tp, fp, fn float64
	for _, r := range results {
		tp += float64(r.TP)
		fp += float64(r.FP)
		fn += float64(r.FN)
	}
	if tp == 0 {
		return 0, 0, 0
	}
	precision, recall = tp/(tp+fp), tp/(tp+fn)
	return 2 * precision * recall / (precision + recall), precision, recall
}
