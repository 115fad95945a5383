package pdbo

import (
	"hgpsim/internal/registry"
	"hgpsim/internal/vec"
)

// EstimatorKind is a hyper-gradient estimator of the scenario's
// `hypergradient.estimator`. Its parameters (VR-HGP's α and β, the
// sampling, the batch) are the hypergradient section's, shared by every
// estimator so that method presets can switch estimators.
type EstimatorKind interface {
	// New returns client lin.ID's estimator for a float64 run.
	New(lin Linearization[float64], cfg *Config) HyperEstimator
	// New32 returns client lin.ID's estimator for a float32 run
	// (precision: float32).
	New32(lin Linearization[float32], cfg *Config) HyperEstimator
	// Rounds returns the communication rounds of m iterations.
	Rounds(m int, s Sampling) int
	// NeedsUndirected reports an estimator that needs every link to be
	// realized in both directions together.
	NeedsUndirected() bool
}

// Estimators holds the hyper-gradient estimators.
var Estimators = registry.New[EstimatorKind]("estimator", "estimator")

func init() {
	Estimators.Register("hgp", "Hyper-Gradient Push (PDBO paper Eq. 12, Alg. 4): u travels over the links that exist and receivers debias it by p̄_ij/δ̄_{j→i}.",
		func() EstimatorKind { return &hgpKind{} })
	Estimators.Register("vr-hgp", "Variance-reduced HGP (App. B's form of Alg. 5, with weights alpha and beta; (1, 0) is exactly HGP): clients push [u; w].",
		func() EstimatorKind { return &vrhgpKind{} })
	Estimators.Register("exact", "Exact recurrent backpropagation (Eq. 11, Alg. 3): combines u from exactly the clients pushed to, with the realized weights; needs undirected links.",
		func() EstimatorKind { return &exactKind{} })
	Estimators.Register("local", "The 'PDBO-MTL (local)' baseline of the cooperative paper: each client uses only ∂_λF̄ and sends nothing.",
		func() EstimatorKind { return &localKind{} })
}

type hgpKind struct{}

func (*hgpKind) New(lin Linearization[float64], cfg *Config) HyperEstimator {
	return NewHGP(lin, cfg.Sampling)
}
func (*hgpKind) New32(lin Linearization[float32], cfg *Config) HyperEstimator {
	return NewHGP(lin, cfg.Sampling)
}
func (*hgpKind) Rounds(m int, s Sampling) int { return s.Rounds(m) }
func (*hgpKind) NeedsUndirected() bool        { return false }

type vrhgpKind struct{}

func (*vrhgpKind) New(lin Linearization[float64], cfg *Config) HyperEstimator {
	return newVRHGP(lin, cfg)
}
func (*vrhgpKind) New32(lin Linearization[float32], cfg *Config) HyperEstimator {
	return newVRHGP(lin, cfg)
}

func newVRHGP[F vec.Float](lin Linearization[F], cfg *Config) HyperEstimator {
	if cfg.DampDirect {
		return NewVRHGPDamped(lin, cfg.Alpha, cfg.Beta, cfg.Sampling)
	}
	return NewVRHGP(lin, cfg.Alpha, cfg.Beta, cfg.Sampling)
}
func (*vrhgpKind) Rounds(m int, s Sampling) int { return s.Rounds(m) }
func (*vrhgpKind) NeedsUndirected() bool        { return false }

type exactKind struct{}

func (*exactKind) New(lin Linearization[float64], cfg *Config) HyperEstimator {
	return NewExactBackprop(lin, cfg.Sampling)
}
func (*exactKind) New32(lin Linearization[float32], cfg *Config) HyperEstimator {
	return NewExactBackprop(lin, cfg.Sampling)
}
func (*exactKind) Rounds(m int, s Sampling) int { return s.Rounds(m) }
func (*exactKind) NeedsUndirected() bool        { return true }

type localKind struct{}

func (*localKind) New(lin Linearization[float64], _ *Config) HyperEstimator {
	return NewLocalHypergradient(lin)
}
func (*localKind) New32(lin Linearization[float32], _ *Config) HyperEstimator {
	return NewLocalHypergradient(lin)
}
func (*localKind) Rounds(int, Sampling) int { return 0 }
func (*localKind) NeedsUndirected() bool    { return false }
