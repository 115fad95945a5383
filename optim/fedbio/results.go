package fedbio

import "hgpsim/optim"

// ClientResult is what a client reports when a phase ends: its mislabel
// detection counts (positive = label changed, predicted when λ < 0.5),
// its number of samples and its λ.
type ClientResult struct {
	TP      int       `wire:"1"`
	FP      int       `wire:"2"`
	FN      int       `wire:"3"`
	N       int       `wire:"4"`
	Weights []float64 `wire:"5"`
}

// ServerResult is what the server reports when a phase ends: what it
// received, measured (uploads delivered to it; hyper-gradient uploads
// apart, with the length of the last), and the global model.
type ServerResult struct {
	UploadBytes         int64     `wire:"1"`
	UploadMessages      int64     `wire:"2"`
	HyperUploadBytes    int64     `wire:"3"`
	HyperUploadMessages int64     `wire:"4"`
	HyperMessageFloats  int       `wire:"5"`
	X                   []float64 `wire:"6"`
}

// Result returns r as the optim.Result a client reports.
func (r ClientResult) Result() optim.Result { return optim.PutResult(r) }

// ClientResultOf reads what ClientResult.Result wrote.
func ClientResultOf(r optim.Result) (ClientResult, error) { return optim.ResultOf[ClientResult](r) }

// Result returns r as the optim.Result the server reports.
func (r ServerResult) Result() optim.Result { return optim.PutResult(r) }

// ServerResultOf reads what ServerResult.Result wrote.
func ServerResultOf(r optim.Result) (ServerResult, error) { return optim.ResultOf[ServerResult](r) }

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
