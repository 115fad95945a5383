package run

import (
	"encoding/json"

	"hgpsim/actors"
	"hgpsim/optim"
)

// MarshalJSON writes summary.json with the schema of metrics.jsonl: an
// aggregate value no client measured (the training loss of a federated
// run whose server alone evaluates, the consensus of clients without
// parameters) is left out, never written as 0.
func (s Summary) MarshalJSON() ([]byte, error) {
	out := summaryJSON{Name: s.Name, Seed: s.Seed, Clients: s.Clients, Network: s.Network, Driver: s.Driver,
		Algorithm: s.Algorithm, Rounds: s.Rounds, Final: measuredOf(s.Final), Traffic: s.Traffic,
		Estimates: s.Estimates, Hypergradient: s.Hypergradient, StoppedEarly: s.StoppedEarly, Blowups: s.Blowups, Wire: s.Wire}
	if s.Outer != nil {
		out.Outer = make([]outerJSON, len(s.Outer))
		for k, r := range s.Outer {
			out.Outer[k] = outerOf(r)
		}
	}
	if s.Best != nil {
		b := outerOf(*s.Best)
		out.Best = &b
	}
	return json.Marshal(out)
}

// summaryJSON is Summary as summary.json holds it, field for field in the
// same order (TestSummaryJSONHasEverySummaryField keeps them in step).
type summaryJSON struct {
	Name          string                   `json:"name"`
	Seed          uint64                   `json:"seed"`
	Clients       int                      `json:"clients"`
	Network       string                   `json:"network"`
	Driver        string                   `json:"driver"`
	Algorithm     string                   `json:"algorithm"`
	Rounds        int                      `json:"sgp_rounds,omitempty"`
	Final         measured                 `json:"final"`
	Traffic       map[string]optim.Traffic `json:"traffic"`
	Estimates     *EstimateError           `json:"estimates,omitempty"`
	Hypergradient *HypergradientSummary    `json:"hypergradient,omitempty"`
	Outer         []outerJSON              `json:"outer,omitempty"`
	Best          *outerJSON               `json:"best,omitempty"`
	StoppedEarly  bool                     `json:"stopped_early,omitempty"`
	Blowups       []Blowup                 `json:"blowups,omitempty"`
	Wire          *actors.WireTraffic      `json:"wire,omitempty"`
}

// outerJSON is an OuterRecord as summary.json holds it.
type outerJSON struct {
	Step int `json:"step"`
	measured
	HypergradientNorm float64 `json:"hypergradient_norm,omitempty"`
	LambdaNorm        float64 `json:"lambda_norm"`
}

func outerOf(r OuterRecord) outerJSON {
	return outerJSON{Step: r.Step, measured: measuredOf(r.Aggregate), HypergradientNorm: r.HypergradientNorm, LambdaNorm: r.LambdaNorm}
}

// measured is an Aggregate with the values nobody measured left out, by
// the rules of the aggregate lines of metrics.jsonl (metricsWriter.round).
type measured struct {
	TrainLoss *float64 `json:"train_loss,omitempty"`
	TrainAcc  *float64 `json:"train_acc,omitempty"`
	ValAcc    *float64 `json:"val_acc,omitempty"`
	TestAcc   *float64 `json:"test_acc,omitempty"`
	TestAccP  *float64 `json:"test_acc_p10,omitempty"`
	Consensus *float64 `json:"consensus,omitempty"`
	OuterLoss float64  `json:"outer_loss,omitempty"`
	MinWeight float64  `json:"min_weight,omitempty"`
}

func measuredOf(a Aggregate) measured {
	m := measured{OuterLoss: a.OuterLoss, MinWeight: a.MinWeight}
	if a.TrainClients > 0 {
		m.TrainLoss, m.TrainAcc = &a.TrainLoss, &a.TrainAcc
	}
	if a.ValRows > 0 {
		m.ValAcc = &a.ValAcc
	}
	if a.TestRows > 0 {
		m.TestAcc, m.TestAccP = &a.TestAcc, &a.TestAccP
	}
	if a.ConsensusMeasured() {
		m.Consensus = &a.Consensus
	}
	return m
}

// UnmarshalJSON reads what MarshalJSON wrote. An aggregate value present
// in the file was measured by at least one client: its count
// (TrainClients, ValRows, TestRows) reads as 1, the exact counts not
// being in summary.json, so that a summary read back and written again
// keeps its values; a consensus distance present was over two clients'
// parameters at least, and XClients reads as 2.
func (s *Summary) UnmarshalJSON(b []byte) error {
	var in summaryJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	*s = Summary{Name: in.Name, Seed: in.Seed, Clients: in.Clients, Network: in.Network, Driver: in.Driver,
		Algorithm: in.Algorithm, Rounds: in.Rounds, Final: in.Final.aggregate(), Traffic: in.Traffic,
		Estimates: in.Estimates, Hypergradient: in.Hypergradient, StoppedEarly: in.StoppedEarly, Blowups: in.Blowups, Wire: in.Wire}
	if in.Outer != nil {
		s.Outer = make([]OuterRecord, len(in.Outer))
		for k, r := range in.Outer {
			s.Outer[k] = r.record()
		}
	}
	if in.Best != nil {
		b := in.Best.record()
		s.Best = &b
	}
	return nil
}

func (r outerJSON) record() OuterRecord {
	return OuterRecord{Step: r.Step, Aggregate: r.aggregate(), HypergradientNorm: r.HypergradientNorm, LambdaNorm: r.LambdaNorm}
}

func (m measured) aggregate() Aggregate {
	a := Aggregate{OuterLoss: m.OuterLoss, MinWeight: m.MinWeight}
	read := func(dst *float64, v *float64, count *int) {
		if v != nil {
			*dst, *count = *v, 1
		}
	}
	read(&a.TrainLoss, m.TrainLoss, &a.TrainClients)
	read(&a.TrainAcc, m.TrainAcc, &a.TrainClients)
	read(&a.ValAcc, m.ValAcc, &a.ValRows)
	read(&a.TestAcc, m.TestAcc, &a.TestRows)
	read(&a.TestAccP, m.TestAccP, &a.TestRows)
	read(&a.Consensus, m.Consensus, &a.XClients)
	if a.XClients > 0 {
		a.XClients = 2
	}
	return a
}
