package scenarios

// A scenario names its algorithm, faults and estimator by registered kind;
// linking every family here makes the kinds known wherever scenarios are
// decoded and validated.
import _ "hgpsim/optim/families"
