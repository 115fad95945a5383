package scenarios

import (
	"strings"
	"testing"
)

// The computation estimate models PDBO's rounds: a pdbo scenario gets a
// time, an algorithm that does not run SGP says it is not estimated
// rather than printing PDBO's time for its default sections.
func TestEstimateTimeOnlyForPDBO(t *testing.T) {
	pdbo, err := Parse("pdbo", []byte("clients: 5\nsgp: {rounds: 100000}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if r := Estimate(pdbo); r.NoTime != "" || r.Seconds <= 0 || strings.Contains(r.String(), "not estimated") {
		t.Errorf("pdbo: %+v: %s", r, r)
	}
	fed, err := Parse("fedavg", []byte("clients: 5\nalgorithm: fedavg\nnetwork: {kind: star}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if r := Estimate(fed); r.NoTime == "" || r.Seconds != 0 || !strings.Contains(r.String(), "computation not estimated") {
		t.Errorf("fedavg: %+v: %s", r, r)
	}
}
