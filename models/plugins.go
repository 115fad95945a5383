package models

import (
	"fmt"

	"hgpsim/internal/registry"
	"hgpsim/models/nn"
)

// Architecture is a model kind of the scenario's `model` section: its
// parameters and the net they describe for given data. See Architectures.
// A kind is written once for both precisions: it describes its net
// (NetSpec), and NewClassifier builds that in float64 or float32.
type Architecture interface {
	// Validate checks the parameters for data with this many features
	// and classes.
	Validate(features, classes int) error
	// Dim returns the number of parameters, without building the model.
	Dim(features, classes int) int64
	// Net describes the model for validated parameters.
	Net(features, classes int) NetSpec
}

// NetSpec describes a Net without its precision: one of the presets
// (NewSoftmax, NewLogistic, NewMLP, with their heads and initializations)
// or a layer stack (NewNet). Architectures return one; NewClassifier and
// BuildNet build it.
type NetSpec struct {
	preset            string // "softmax", "logistic", "mlp"; "" for layers
	in                nn.Shape
	layers            []nn.Spec
	features, classes int
	hidden            int
	l2                float64
}

// BuildNet returns the Net s describes, computing in F. It panics on a
// spec an Architecture did not validate.
func BuildNet[F Float](s NetSpec) *Net[F] {
	switch s.preset {
	case "softmax":
		return NewSoftmax[F](s.features, s.classes, s.l2)
	case "logistic":
		return NewLogistic[F](s.features, s.l2)
	case "mlp":
		return NewMLP[F](s.features, s.hidden, s.classes, s.l2)
	}
	m, err := NewNet[F](s.in, s.layers, s.classes, s.l2)
	if err != nil {
		panic(fmt.Sprintf("models: BuildNet on an invalid spec: %v", err))
	}
	return m
}

// NewClassifier returns the model of kind a for data with this many
// features and classes, computing in F; a's parameters must be valid.
func NewClassifier[F Float](a Architecture, features, classes int) Classifier[F] {
	return BuildNet[F](a.Net(features, classes))
}

// NewBilevel returns head h around bases from newBase, in F: the
// Head's New for float64, New32 for float32.
func NewBilevel[F Float](h Head, newBase func() Classifier[F], p HeadParams) Bilevel[F] {
	switch nb := any(newBase).(type) {
	case func() Classifier[float64]:
		return any(h.New(nb, p)).(Bilevel[F])
	case func() Classifier[float32]:
		return any(h.New32(nb, p)).(Bilevel[F])
	}
	panic("models: NewBilevel: unreachable element type")
}

// Build returns one client's bilevel model of a scenario's model section
// in F: head h around bases of kind a for data with this many features
// and classes (all validated).
func Build[F Float](a Architecture, h Head, features, classes int, p HeadParams) Bilevel[F] {
	return NewBilevel(h, func() Classifier[F] { return NewClassifier[F](a, features, classes) }, p)
}

// Architectures holds the model kinds, selected by `model.kind`.
var Architectures = registry.New[Architecture]("model", "kind")

// Head is how the hyperparameters λ_i enter a client's costs (PDBO paper
// Sec. 6.1), selected by `model.head`. Heads share the parameters of
// HeadParams, so that method presets can switch heads on one scenario.
type Head interface {
	// DimLambda returns d_λ for data with this many classes.
	DimLambda(classes int, p HeadParams) int
	// New wraps bases from newBase (a fresh Classifier per ensemble
	// member) in float64, New32 in float32. Both call one generic
	// function of the head (see the heads of this package); NewBilevel
	// picks the one for an element type.
	New(newBase func() Classifier[float64], p HeadParams) Bilevel[float64]
	New32(newBase func() Classifier[float32], p HeadParams) Bilevel[float32]
}

// HeadModelValidator is implemented by heads whose parameters must fit the
// model's: scenario validation calls ValidateModel with the validated
// architecture and the data's shape.
type HeadModelValidator interface {
	ValidateModel(arch Architecture, features, classes int) error
}

// Heads holds the personalization heads.
var Heads = registry.New[Head]("head", "head")

// HeadParams are the parameters every head reads (unused ones are ignored).
type HeadParams struct {
	K             int     // ensemble size
	OuterL2       float64 // L2 rate on λ in F (λ^K for ensemble-label-weights)
	OuterL2Labels float64 // ensemble-label-weights: L2 rate on λ^C
}

// MaxEnsemble bounds the ensemble size K.
const MaxEnsemble = 64

// Validate checks the shared head parameters.
func (p HeadParams) Validate() error {
	if p.K < 1 || p.K > MaxEnsemble {
		return fmt.Errorf("k: the ensemble size must be in [1, %d], got %d", MaxEnsemble, p.K)
	}
	if err := nonNegativeRate("outer_l2", p.OuterL2); err != nil {
		return err
	}
	return nonNegativeRate("outer_l2_labels", p.OuterL2Labels)
}

func nonNegativeRate(name string, v float64) error {
	if !(v >= 0) || v > 1e12 {
		return fmt.Errorf("%s must be a finite number >= 0, got %v", name, v)
	}
	return nil
}

// MaxParams bounds the parameters of one model (800 MB per vector).
const MaxParams = 100_000_000

// MaxHidden bounds the hidden units of an MLP.
const MaxHidden = 1 << 16

func checkDim(dim int64) error {
	if dim > MaxParams {
		return fmt.Errorf("the model would have %d parameters, more than the %d supported", dim, MaxParams)
	}
	return nil
}

func init() {
	Architectures.Register("softmax",
		"Multinomial logistic regression (softmax regression): the nn preset dense C with the softmax cross-entropy; strongly convex with l2 > 0 (the lower-level assumption).",
		func() Architecture { return &SoftmaxSpec{L2: 1e-3} })
	Architectures.Register("logistic",
		"Binary logistic regression (needs two classes): the nn preset dense 1 with the binary cross-entropy softplus(z) − y·z; strongly convex with l2 > 0.",
		func() Architecture { return &LogisticSpec{L2: 1e-3} })
	Architectures.Register("mlp",
		"One-hidden-layer tanh perceptron: the nn preset dense hidden, tanh, dense C with the softmax cross-entropy; the non-convex model, beyond the papers' lower-level assumptions. Products exact by the R-operator.",
		func() Architecture { return &MLPSpec{L2: 1e-3, Hidden: 32} })
	Architectures.Register("cnn",
		"Convolutional network on image rows (NCHW): a preset of the papers' nets (fedem-cnn, fedbio-4conv, node-weighting, lenet) or a layer list; gradients and products exact by the R-operator.",
		func() Architecture { return &CNNSpec{L2: 1e-3} })
}

// SoftmaxSpec selects NewSoftmax.
type SoftmaxSpec struct {
	L2 float64 `yaml:"l2" doc:"L2 rate on all parameters, finite, >= 0: f = mean cross-entropy + (l2/2)‖x‖²"`
}

// Validate implements Architecture.
func (s *SoftmaxSpec) Validate(features, classes int) error {
	if err := nonNegativeRate("l2", s.L2); err != nil {
		return err
	}
	return checkDim(s.Dim(features, classes))
}

// Dim implements Architecture.
func (*SoftmaxSpec) Dim(features, classes int) int64 {
	return int64(classes)*int64(features) + int64(classes)
}

// Net implements Architecture.
func (s *SoftmaxSpec) Net(features, classes int) NetSpec {
	return NetSpec{preset: "softmax", features: features, classes: classes, l2: s.L2}
}

// LogisticSpec selects NewLogistic.
type LogisticSpec struct {
	L2 float64 `yaml:"l2" doc:"L2 rate on all parameters, finite, >= 0"`
}

// Validate implements Architecture.
func (s *LogisticSpec) Validate(features, classes int) error {
	if classes != 2 {
		return fmt.Errorf("logistic is binary and needs data with 2 classes, got %d", classes)
	}
	if err := nonNegativeRate("l2", s.L2); err != nil {
		return err
	}
	return checkDim(s.Dim(features, classes))
}

// Dim implements Architecture.
func (*LogisticSpec) Dim(features, _ int) int64 { return int64(features) + 1 }

// Net implements Architecture.
func (s *LogisticSpec) Net(features, _ int) NetSpec {
	return NetSpec{preset: "logistic", features: features, classes: 2, l2: s.L2}
}

// MLPSpec selects NewMLP.
type MLPSpec struct {
	L2     float64 `yaml:"l2" doc:"L2 rate on all parameters, finite, >= 0"`
	Hidden int     `yaml:"hidden" doc:"hidden units, 1 … 65536"`
}

// Validate implements Architecture.
func (s *MLPSpec) Validate(features, classes int) error {
	if err := nonNegativeRate("l2", s.L2); err != nil {
		return err
	}
	if s.Hidden < 1 || s.Hidden > MaxHidden {
		return fmt.Errorf("hidden must be in [1, %d], got %d", MaxHidden, s.Hidden)
	}
	return checkDim(s.Dim(features, classes))
}

// Dim implements Architecture.
func (s *MLPSpec) Dim(features, classes int) int64 {
	h := int64(s.Hidden)
	return h*int64(features) + h + int64(classes)*h + int64(classes)
}

// Net implements Architecture.
func (s *MLPSpec) Net(features, classes int) NetSpec {
	return NetSpec{preset: "mlp", features: features, hidden: s.Hidden, classes: classes, l2: s.L2}
}

func init() {
	Heads.Register("none", "No hyperparameters: every client trains the plain model (d_λ = 0).",
		func() Head { return &plainHead{} })
	Heads.Register("label-weights",
		"PDBO-DA: λ ∈ R^C weighs each label's loss by C·softmax(λ)_c in the inner cost (PDBO paper Sec. 6.1).",
		func() Head { return &labelWeightsHead{} })
	Heads.Register("ensemble",
		"PDBO-MTL: an ensemble of k copies of the model, predicting Σ_k softmax(λ)_k·softmax(logits_k), λ ∈ R^K (after FedEM).",
		func() Head { return &ensembleHead{} })
	Heads.Register("ensemble-label-weights",
		"PDBO-MTL&DA: the ensemble and the label weights together, λ = [λ^K; λ^C].",
		func() Head { return &mtldaHead{} })
}

type plainHead struct{}

func (*plainHead) DimLambda(int, HeadParams) int { return 0 }
func (*plainHead) New(nb func() Classifier[float64], _ HeadParams) Bilevel[float64] {
	return Plain[float64](nb())
}
func (*plainHead) New32(nb func() Classifier[float32], _ HeadParams) Bilevel[float32] {
	return Plain[float32](nb())
}

type labelWeightsHead struct{}

func (*labelWeightsHead) DimLambda(classes int, _ HeadParams) int { return classes }
func (*labelWeightsHead) New(nb func() Classifier[float64], p HeadParams) Bilevel[float64] {
	return LabelWeights(nb(), p.OuterL2)
}
func (*labelWeightsHead) New32(nb func() Classifier[float32], p HeadParams) Bilevel[float32] {
	return LabelWeights(nb(), p.OuterL2)
}

type ensembleHead struct{}

func (*ensembleHead) DimLambda(_ int, p HeadParams) int { return p.K }
func (*ensembleHead) New(nb func() Classifier[float64], p HeadParams) Bilevel[float64] {
	return Ensemble(members(nb, p.K), p.OuterL2)
}
func (*ensembleHead) New32(nb func() Classifier[float32], p HeadParams) Bilevel[float32] {
	return Ensemble(members(nb, p.K), p.OuterL2)
}

type mtldaHead struct{}

func (*mtldaHead) DimLambda(classes int, p HeadParams) int { return p.K + classes }
func (*mtldaHead) New(nb func() Classifier[float64], p HeadParams) Bilevel[float64] {
	return MTLDA(members(nb, p.K), p.OuterL2, p.OuterL2Labels)
}
func (*mtldaHead) New32(nb func() Classifier[float32], p HeadParams) Bilevel[float32] {
	return MTLDA(members(nb, p.K), p.OuterL2, p.OuterL2Labels)
}

func members[F Float](newBase func() Classifier[F], k int) []Classifier[F] {
	bs := make([]Classifier[F], k)
	for i := range bs {
		bs[i] = newBase()
	}
	return bs
}
