// Package datasets holds the data of hgpsim: the Dataset every model
// reads, the file formats (IDX), the data kinds of the scenario's `data`
// section (registry Sources) and the ways a pool of examples is split over
// clients (Dirichlet partitions with cluster normalization, iid and
// McMahan-shard federated splits, the node-shift rotations and label
// permutations, label noise).
//
// # Datasets are read-only
//
// A Dataset is built once by a loader and then shared by any number of
// models and goroutines. Images are kept as one byte per feature with a
// decode table (Levels), which gives every consumer the float64 bits the
// float64 layout would have.
//
// # Synthetic data
//
// Synthetic builds heterogeneous client data without any download: a
// Gaussian mixture with shared class means, per-client Dirichlet label skew
// and per-client feature shift. Each client's data comes from its own
// stream of package rng, so it is reproducible bit for bit and independent
// of the number of clients. Pool concatenates client datasets into the
// pooled reference problem.
//
// # Blocks of nodes
//
// A worker process that hosts nodes lo … hi−1 builds their data only
// (LoadBlock); what is global about a source is computed whole on indices
// and labels, so a block has the same bits as the same nodes of a full
// Load.
//
// Problems a user can cause (an invalid spec, a missing or corrupt file)
// are errors; a malformed Dataset handed to a function is a programmer
// error and panics. It may import internal packages only.
package datasets
