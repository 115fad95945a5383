package graph

import "fmt"

func init() {
	Topologies.Register("torus",
		"A rows × cols two-dimensional torus: node r·cols + c is linked with its four neighbours (r±1, c) and (r, c±1), wrapping around, each undirected link up with probability prob per round. rows: 0 picks the most square factorization of the number of clients.",
		func() Topology { return &Torus{Prob: 1, RandomLinks: defaultLinks()} })
}

// Torus links the nodes of a rows × cols grid with wrap-around.
type Torus struct {
	Rows        int     `yaml:"rows" doc:"grid rows, dividing the number of clients; 0 picks the most square factorization"`
	Cols        int     `yaml:"cols" doc:"grid columns, rows × cols = clients; 0 means clients / rows"`
	Prob        float64 `yaml:"prob" doc:"per-round probability that a link is up, in (0, 1]"`
	RandomLinks `yaml:",inline"`
}

// shape returns the grid for n nodes.
func (t *Torus) shape(n int) (rows, cols int, err error) {
	rows, cols = t.Rows, t.Cols
	switch {
	case rows == 0 && cols == 0:
		for r := 1; r*r <= n; r++ {
			if n%r == 0 {
				rows = r
			}
		}
		cols = n / rows
	case rows == 0 && cols > 0 && n%cols == 0:
		rows = n / cols
	case cols == 0 && rows > 0 && n%rows == 0:
		cols = n / rows
	}
	if rows < 1 || cols < 1 || rows*cols != n {
		return 0, 0, fmt.Errorf("rows × cols must equal the number of clients %d, got rows %d, cols %d", n, t.Rows, t.Cols)
	}
	return rows, cols, nil
}

// Validate implements Topology.
func (t *Torus) Validate(n int) error {
	if _, _, err := t.shape(n); err != nil {
		return err
	}
	if err := probability("prob", t.Prob); err != nil {
		return err
	}
	return t.RandomLinks.validate()
}

// UpFraction implements UpFraction: every link is up with prob.
func (t *Torus) UpFraction() float64 { return t.Prob }

// LinkCount implements Topology.
func (t *Torus) LinkCount(n int) int64 { return 4 * int64(n) }

// OneWay implements Topology.
func (t *Torus) OneWay() bool { return false }

// ConnectedByConstruction implements ConnectedByConstruction.
func (t *Torus) ConnectedByConstruction() bool { return true }

// Sparse implements Sparse: four links a node.
func (t *Torus) Sparse() bool { return true }

// Build implements Topology.
func (t *Torus) Build(n int, _ uint64) (*Network, error) {
	rows, cols, err := t.shape(n)
	if err != nil {
		return nil, err
	}
	nw := t.newSparse(n)
	nw.Symmetric = true
	for r := range rows {
		for c := range cols {
			i := r*cols + c
			for _, j := range [...]int{((r+1)%rows)*cols + c, r*cols + (c+1)%cols} {
				if j != i { // a grid of one row or column has no vertical (horizontal) links
					nw.setLink(i, j, t.Prob)
					nw.setLink(j, i, t.Prob)
				}
			}
		}
	}
	return nw, nil
}
