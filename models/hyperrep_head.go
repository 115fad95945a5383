package models

import "fmt"

// hyperRepHead builds HyperRep from the mlp architecture's shape, or
// a cut of a cnn's layers: the head `hyper-representation`.
type hyperRepHead struct {
	Activation  string  `yaml:"activation" doc:"mlp: σ of the hidden layer, relu (the papers' baseline) or tanh; a cnn's activations are its layers"`
	InnerLayers int     `yaml:"inner_layers" doc:"cnn: how many of the last parameterised layers (all dense) form the inner variable x, the layers before them λ; 0: 2, the last two dense layers as FBO-AggITD's LeNet. mlp: 0 or 1 (its output layer)"`
	Dropout     float64 `yaml:"dropout" doc:"mlp: probability in [0, 1) that a hidden feature is dropped in the clients' products (the FedNest authors' released code: 0.5; the papers state none), with a mask per product from the client's own stream; 0: none"`
	Penalty     string  `yaml:"penalty" doc:"mlp: squared ((l2/2)‖x‖², the papers' strongly convex g) or norm (l2·(‖W₂‖ + ‖b₂‖), the released code's non-squared norm per tensor)"`
}

// Validate checks the head's parameters against the model kind.
func (h *hyperRepHead) Validate(arch string) error {
	switch arch {
	case "mlp":
		if h.Activation != "relu" && h.Activation != "tanh" {
			return fmt.Errorf("activation must be relu or tanh, got %q", h.Activation)
		}
		if h.InnerLayers != 0 && h.InnerLayers != 1 {
			return fmt.Errorf("inner_layers: an mlp's inner variable is its output layer (inner_layers 0 or 1), got %d", h.InnerLayers)
		}
		if !(h.Dropout >= 0 && h.Dropout < 1) {
			return fmt.Errorf("dropout must be in [0, 1), got %v", h.Dropout)
		}
		if h.Penalty != "squared" && h.Penalty != "norm" {
			return fmt.Errorf("penalty must be squared or norm, got %q", h.Penalty)
		}
	case "cnn":
		if h.Activation != "relu" {
			return fmt.Errorf("activation applies to model.kind mlp; a cnn's activations are its layers (remove activation: %s)", h.Activation)
		}
		if h.Dropout != 0 || h.Penalty != "squared" {
			return fmt.Errorf("dropout and penalty apply to model.kind mlp (remove them for a cnn)")
		}
		if h.InnerLayers < 0 {
			return fmt.Errorf("inner_layers must be >= 0 (0: %d), got %d", DefaultInnerLayers, h.InnerLayers)
		}
	default:
		return fmt.Errorf("head hyper-representation splits an mlp (hidden layer outer, output layer inner) or a cnn (its last dense layers inner, the rest outer); model.kind is %s", arch)
	}
	return nil
}

// innerLayers returns the cnn's number of inner layers.
func (h *hyperRepHead) innerLayers() int {
	if h.InnerLayers == 0 {
		return DefaultInnerLayers
	}
	return h.InnerLayers
}

// ValidateModel implements HeadModelValidator: a cnn's layers must split
// as inner_layers asks.
func (h *hyperRepHead) ValidateModel(arch Architecture, features, classes int) error {
	spec, ok := arch.(*CNNSpec)
	if !ok {
		return nil
	}
	in, layers, _, err := spec.plan(features, classes)
	if err != nil {
		return err
	}
	_, _, _, err = SplitHyperRep(in, layers, classes, h.innerLayers())
	return err
}

// DimLambda is not known from the classes alone; the pdbo algorithm, the
// only user, refuses this head.
func (*hyperRepHead) DimLambda(int, HeadParams) int { return 0 }

func (h *hyperRepHead) New(nb func() Classifier[float64], _ HeadParams) Bilevel[float64] {
	return hyperRepOf(h, nb)
}

func (h *hyperRepHead) New32(nb func() Classifier[float32], _ HeadParams) Bilevel[float32] {
	return hyperRepOf(h, nb)
}

// hyperRepOf cuts the net newBase returns as h says.
func hyperRepOf[F Float](h *hyperRepHead, newBase func() Classifier[F]) Bilevel[F] {
	if base, ok := newBase().(*Net[F]); ok && !base.binary {
		if base.hidden > 0 {
			return NewHyperRepWith[F](base.features, base.hidden, base.classes, base.l2, h.Activation != "tanh",
				HyperRepOptions{Dropout: h.Dropout, NormPenalty: h.Penalty == "norm"})
		}
		m, err := NewCNNHyperRep[F](base.in, base.layers, base.classes, h.innerLayers(), base.l2)
		if err != nil {
			panic("models: head hyper-representation on a cnn it did not validate: " + err.Error())
		}
		return m
	}
	panic("models: head hyper-representation needs model.kind mlp or cnn (validated before)")
}

func init() {
	Heads.Register("hyper-representation",
		"Federated hyper-representation (FedNest, FBO-AggITD Sec. 5 and App. A.2): the net's first layers are the outer variable λ (a representation) and its last layers the inner x; g = CE on train + (l2/2)‖x‖² (the model's l2 is μ, on x only; penalty norm: l2·(‖W₂‖ + ‖b₂‖)), f = CE on validation; mlp only: dropout p on the hidden features in the clients' products. With model.kind mlp, λ is the hidden layer (W₁, b₁) and x the output layer (W₂, b₂); with model.kind cnn, x is the last inner_layers dense layers (2: for lenet, dense 84 and dense C) and λ every layer before them. For the federated bilevel algorithms (fednest, lfednest, fbo-aggitd), not pdbo.",
		func() Head { return &hyperRepHead{Activation: "relu", Penalty: "squared"} })
}
