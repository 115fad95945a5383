// Package report turns the outputs of runs into tables and figures: the
// sweep's results.md, results.csv and validation.png, and the plotting
// helpers the experiments share.
//
// It may import run, scenarios, optim, internal packages, gonum and
// gonum/plot; never experiments, bench or the command.
package report
