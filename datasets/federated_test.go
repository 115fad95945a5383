package datasets

import (
	"testing"

	"hgpsim/internal/rng"
)

// The shards split gives each client two label-sorted shards (at most four
// labels, usually two), the iid split all labels; every kept image goes to
// exactly one client, the server gets the test data only.
func TestFederatedSplit(t *testing.T) {
	r := testRand(t, 5)
	train := randomData(r, 400, 3, 10)
	test := randomData(r, 50, 3, 10)
	for _, shards := range []bool{false, true} {
		out, err := FederatedSplit(train, test, 10, shards, 2, 30, 0.2, 0.5, rng.New(1, rng.Global, rng.PurposePartition))
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != 11 || out[0].Train.N != 0 || out[0].Val.N != 0 || out[0].Test.N < 20 || out[0].Test.N > 30 {
			t.Fatalf("server part: %d nodes, train %d, val %d, test %d", len(out), out[0].Train.N, out[0].Val.N, out[0].Test.N)
		}
		total, maxLabels := 0, 0
		for _, cd := range out[1:] {
			if cd.Val.N != 6 || cd.Train.N != 24 || cd.Test.N != 0 {
				t.Errorf("client sizes train %d, val %d, test %d; want 24, 6, 0", cd.Train.N, cd.Val.N, cd.Test.N)
			}
			labels := map[int]bool{}
			for _, y := range append(append([]int(nil), cd.Train.Y...), cd.Val.Y...) {
				labels[y] = true
			}
			maxLabels = max(maxLabels, len(labels))
			total += cd.Train.N + cd.Val.N
		}
		if total != 300 {
			t.Errorf("%d images given to clients, want 300", total)
		}
		if shards && maxLabels > 4 {
			t.Errorf("shards: a client has %d labels, want at most 4", maxLabels)
		}
		if !shards && maxLabels < 5 {
			t.Errorf("iid: the most varied client has only %d labels", maxLabels)
		}
	}
	if _, err := FederatedSplit(train, test, 10, false, 2, 41, 0.2, 1, testRand(t, 1)); err == nil {
		t.Error("10 × 41 images out of 400: no error")
	}
}

// On the real files: 100 clients of 600 images, node 0 with the 10,000
// test images, pixels standardized.
func TestFederatedFashionMNIST(t *testing.T) {
	if m := FashionMNIST("").Missing(); len(m) > 0 {
		t.Skipf("Fashion-MNIST not installed (missing %v); apt-get install %s", m, FashionMNISTPackage)
	}
	f := &FederatedData{Base: "fashion-mnist", Split: "shards", Shards: 2, PerClient: 600, ValFrac: 0.2, TestFrac: 1, Normalize: true}
	if err := f.Validate(101); err != nil {
		t.Fatal(err)
	}
	data, err := f.Load(101, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) != 101 || data[0].Test.N != 10000 || data[1].Train.N != 480 || data[1].Val.N != 120 {
		t.Fatalf("got %d nodes, test %d, client 1 train %d val %d", len(data), data[0].Test.N, data[1].Train.N, data[1].Val.N)
	}
	var sum float64
	for _, v := range data[0].Test.X {
		sum += v
	}
	if m := sum / float64(len(data[0].Test.X)); m < -0.2 || m > 0.2 {
		t.Errorf("standardized test pixels have mean %.3f", m)
	}
}
