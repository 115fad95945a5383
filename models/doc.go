// Package models holds the differentiable models of hgpsim; their data
// (package datasets) is a read-only Dataset of rows they are given.
//
// # Parameters are flat slices
//
// A model's parameters are one []F of length Dim(), owned by the
// caller. Optimizers, push-sum mixing and messages all work on that flat
// vector and never need to know the model's structure; each model documents
// its layout (for softmax regression: the weight matrix row-major, then the biases).
//
// # Models
//
// Every model is a network of package nn plus a loss head (Net): softmax
// regression, logistic regression and the one-hidden-layer tanh MLP are nn
// presets, a cnn is a preset of the papers' nets or a layer list. Softmax
// and logistic regression are strongly convex, as the lower level of the
// bilevel problem assumes; the MLP and the cnns are the non-convex models
// for experiments beyond that assumption. All are SecondOrder: exact
// Hessian-vector products by Pearlmutter's R-operator through the net,
// tested against finite differences of Grad. The heads (label weights,
// ensembles, MTL&DA, the hyper-representation) and the per-sample
// weighted loss wrap any of them.
//
// # Losses are means
//
// Every loss is the mean over the selected rows of a Dataset plus the model's
// L2 regularizer (L2/2)‖x‖², which covers every parameter. Means make
// minibatch and full-batch values comparable, and with equal data sizes per
// client the pooled problem's loss is exactly the average of the clients'
// losses — the objective decentralized optimization targets.
//
// A batch is named by a slice of row indices; nil means all rows. Sampling the
// indices is the caller's job (with its own rng stream), so models hold no
// randomness apart from the *rand.Rand passed to Init.
//
// # Kernels are destination-first and do not allocate
//
// Following gonum, Grad(dst, x, d, idx) writes into a caller-owned dst and
// returns the loss; HVP(dst, x, d, idx, u) likewise. The models run a
// minibatch as a few matrix products (package internal/gemm) whose
// summation orders are those of the row-by-row loops they replaced, each
// product fused into its sum (the row-by-row references in the tests take
// theirs the same way, and match bit for bit); a large batch is processed
// in chunks of rows, in order. To stay allocation-free a Model value keeps scratch
// buffers that grow to the largest chunk seen, which makes it
// single-goroutine: each client gets its own value via Clone. Datasets are
// read-only and may be shared freely.
//
// Dimension mismatches (a parameter vector of the wrong length, a Dataset
// with the wrong number of features or classes, an out-of-range index or
// label, an empty batch) are programmer errors and panic with a message that
// names them. Problems a user can cause, such as an invalid model spec,
// are returned as errors.
//
// # Precision
//
// Every model is generic over its element type F, float64 or float32
// (Model[F], Bilevel[F], Net[F], …), with the same summation orders in
// both.
// In F: the parameters x, gradients, Hessian-vector products, the
// directions u, OuterGrad's ∂ₓF, the nets' activations and workspaces,
// and the rows of a batch (gathered from the Dataset's float64 values or
// byte codes and rounded to F once). In float64 whatever the precision:
//
//   - λ and every λ-sized vector (InnerCross's destination, OuterGrad's
//     ∂_λF). λ is tiny for the PDBO heads (C label weights, K ensemble
//     weights), so float64 costs nothing, and the outer optimizer's
//     state and the hyper-gradient accumulators built from these vectors
//     keep full precision. A float32 model rounds λ to F where its
//     arithmetic needs it (the hyper-representation's body, whose λ is a
//     layer of the net, converts it once per call).
//   - losses and accuracies, summed over batches, clients and rounds
//     where float32's seven digits would run out.
//   - the per-row head arithmetic: log-sum-exp, softmax probabilities,
//     mixture responsibilities and their R-terms are computed in float64
//     from the F logits (C or K values a row, next to the nets' work)
//     and rounded to F where they enter a net's backward pass;
//     regularizer and L2 rates are float64, rounded to F where they
//     scale a vector.
//
// Architectures describe their net (NetSpec) and NewClassifier[F] builds
// it; heads build both precisions from one generic function (Head.New,
// Head.New32; NewBilevel[F], Build[F]).
//
// It may import internal packages, models/nn, datasets and gonum; never
// graph, optim or anything above them. It reads no file: loading and
// splitting data is package datasets' job.
package models
