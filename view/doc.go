// Package view serves the page of a run or a sweep folder (hgpsim view):
// the network drawn round by round with its failures, the curves of
// metrics.jsonl, and a sweep's progress, table and plots.
//
// The server is read only and confined to the folder. A run's link
// states come from its recording (links.csv.gz) when it has one and are
// otherwise realized again from the scenario and its seed: every
// realization is a pure function of the seed and the round (graph), so
// the page shows exactly what the run saw. Rounds are sent in windows of
// at most 512, so a long trace is never sent whole. phases.jsonl (run)
// ties metrics.jsonl's phase rounds to the rounds links are realized at.
//
// The page is hand-written HTML, CSS, JavaScript and SVG, embedded in
// the binary; it loads nothing from the network. Page with data inlines
// everything in one file (hgpsim view --html).
package view
