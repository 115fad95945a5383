package datasets

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// idxBytes returns an IDX file: magic, dimensions, then data, uncompressed.
func idxBytes(magic uint32, dims []uint32, data []byte) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.BigEndian, magic)
	for _, d := range dims {
		binary.Write(&b, binary.BigEndian, d)
	}
	b.Write(data)
	return b.Bytes()
}

// gzipBytes compresses b.
func gzipBytes(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	w := gzip.NewWriter(&out)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// writeFile writes b to dir/name and returns the path.
func writeFile(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// idxSample is a small image set: n images of rows×cols pixels covering
// 0…255, with labels 0…4.
type idxSample struct {
	n, rows, cols int
	pixels        []byte
	labels        []byte
}

func newIDXSample() idxSample {
	s := idxSample{n: 7, rows: 3, cols: 4}
	s.pixels = make([]byte, s.n*s.rows*s.cols)
	for i := range s.pixels {
		s.pixels[i] = byte(i * 37 % 256)
	}
	s.pixels[0], s.pixels[1] = 0, 255
	s.labels = []byte{0, 4, 1, 3, 2, 4, 0}
	return s
}

func (s idxSample) images() []byte {
	return idxBytes(idxImagesMagic, []uint32{uint32(s.n), uint32(s.rows), uint32(s.cols)}, s.pixels)
}

func (s idxSample) labelFile() []byte {
	return idxBytes(idxLabelsMagic, []uint32{uint32(len(s.labels))}, s.labels)
}

// check compares d with the sample it was written from.
func (s idxSample) check(t *testing.T, d *Dataset) {
	t.Helper()
	x := d.Floats()
	if d.N != s.n || d.D != s.rows*s.cols || d.C != 5 || len(x) != d.N*d.D || len(d.Y) != d.N {
		t.Fatalf("N=%d D=%d C=%d len(X)=%d len(Y)=%d, want N=%d D=%d C=5", d.N, d.D, d.C, len(x), len(d.Y), s.n, s.rows*s.cols)
	}
	for i, p := range s.pixels {
		if x[i] != float64(p)/255 {
			t.Fatalf("X[%d] = %v, want %d/255", i, x[i], p)
		}
	}
	if x[0] != 0 || x[1] != 1 {
		t.Errorf("pixels 0 and 255 became %v and %v, want 0 and 1", x[0], x[1])
	}
	for i, l := range s.labels {
		if d.Y[i] != int(l) {
			t.Fatalf("Y[%d] = %d, want %d", i, d.Y[i], l)
		}
	}
}

func TestLoadIDXRoundTrip(t *testing.T) {
	s := newIDXSample()
	for _, tc := range []struct {
		name             string
		gzImages, gzLbls bool
		imgName, lblName string
	}{
		{"plain", false, false, "img-idx3-ubyte", "lbl-idx1-ubyte"},
		{"gzip", true, true, "img-idx3-ubyte.gz", "lbl-idx1-ubyte.gz"},
		{"mixed", true, false, "img", "lbl"},
		// Detection is by content: a plain file named .gz and a gzip file
		// without the suffix both load.
		{"misnamed", true, false, "img.raw", "lbl.gz"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			img, lbl := s.images(), s.labelFile()
			if tc.gzImages {
				img = gzipBytes(t, img)
			}
			if tc.gzLbls {
				lbl = gzipBytes(t, lbl)
			}
			d, err := LoadIDX(writeFile(t, dir, tc.imgName, img), writeFile(t, dir, tc.lblName, lbl))
			if err != nil {
				t.Fatal(err)
			}
			s.check(t, d)
		})
	}
}

func TestLoadIDXClassesAtLeastTwo(t *testing.T) {
	dir := t.TempDir()
	s := newIDXSample()
	s.labels = make([]byte, s.n) // all 0
	d, err := LoadIDX(writeFile(t, dir, "i", s.images()), writeFile(t, dir, "l", s.labelFile()))
	if err != nil {
		t.Fatal(err)
	}
	if d.C != 2 {
		t.Errorf("all labels 0: C = %d, want 2", d.C)
	}
}

func TestLoadIDXErrors(t *testing.T) {
	s := newIDXSample()
	img, lbl := s.images(), s.labelFile()
	for _, tc := range []struct {
		name     string
		img, lbl []byte // nil: file absent
		bad      string // the file the error must name: "img" or "lbl"
		want     string // further text the error must contain
	}{
		{"missing images", nil, lbl, "img", "no such file"},
		{"missing labels", img, nil, "lbl", "no such file"},
		{"empty images", []byte{}, lbl, "img", "truncated"},
		{"short header", img[:10], lbl, "img", "truncated"},
		{"labels as images", lbl, lbl, "img", "bad magic 0x00000801, want 0x00000803"},
		{"images as labels", img, img, "lbl", "bad magic 0x00000803, want 0x00000801"},
		{"float images", append([]byte{0, 0, 0x0d, 3}, img[4:]...), lbl, "img", "bad magic"},
		{"truncated images", img[:len(img)-1], lbl, "img", "truncated"},
		{"truncated labels", img, lbl[:len(lbl)-1], "lbl", "truncated"},
		{"truncated gzip images", gzipBytes(t, img)[:40], lbl, "img", "truncated"},
		{"truncated gzip labels", img, gzipBytes(t, lbl)[:20], "lbl", "truncated"},
		{"trailing images", append(slices.Clone(img), 1, 2), lbl, "img", "trailing"},
		{"trailing labels", img, append(slices.Clone(lbl), 1), "lbl", "trailing"},
		{"zero pixels", idxBytes(idxImagesMagic, []uint32{3, 0, 28}, nil), lbl, "img", "0×28"},
		{"count mismatch", img, idxBytes(idxLabelsMagic, []uint32{3}, []byte{1, 2, 3}), "lbl", "7 images"},
		// Headers promising absurd sizes are refused before any allocation.
		{"huge images", idxBytes(idxImagesMagic, []uint32{1 << 20, 1 << 10, 1 << 10}, nil), lbl, "img", "limit"},
		{"huge image", idxBytes(idxImagesMagic, []uint32{1, 1 << 16, 1 << 16}, nil), lbl, "img", "limit"},
		// Found by FuzzLoadIDX: rows·cols ≥ 2^63 wrapped to a negative int64
		// that passed every check, and make panicked.
		{"pixels per image overflow int64", idxBytes(idxImagesMagic, []uint32{1, 0xcbcbcbcb, 0xcbcbcbcb}, []byte{200}),
			idxBytes(idxLabelsMagic, []uint32{1}, []byte{1}), "img", "limit"},
		{"huge labels", img, idxBytes(idxLabelsMagic, []uint32{1<<32 - 1}, nil), "lbl", "limit"},
		{"plain header lies", idxBytes(idxImagesMagic, []uint32{1 << 18, 28, 28}, nil), lbl, "img", "truncated"},
		{"gzip header lies", gzipBytes(t, idxBytes(idxImagesMagic, []uint32{1 << 18, 28, 28}, nil)), lbl, "img", "truncated"},
		{"corrupt gzip", append([]byte{0x1f, 0x8b}, img...), lbl, "img", "gzip"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			paths := map[string]string{"img": filepath.Join(dir, "images.bin"), "lbl": filepath.Join(dir, "labels.bin")}
			if tc.img != nil {
				writeFile(t, dir, "images.bin", tc.img)
			}
			if tc.lbl != nil {
				writeFile(t, dir, "labels.bin", tc.lbl)
			}
			d, err := LoadIDX(paths["img"], paths["lbl"])
			if err == nil || d != nil {
				t.Fatalf("accepted: %+v", d)
			}
			msg := err.Error()
			if !strings.Contains(msg, paths[tc.bad]) {
				t.Errorf("error %q does not name %s", msg, paths[tc.bad])
			}
			if !strings.Contains(msg, tc.want) {
				t.Errorf("error %q does not contain %q", msg, tc.want)
			}
		})
	}
}

// writeSource writes s as the four files of MNIST(dir), train with the
// sample's labels and test with the first three images.
func writeSource(t *testing.T, dir string, s idxSample) IDXSource {
	src := MNIST(dir)
	small := idxSample{n: 3, rows: s.rows, cols: s.cols, pixels: s.pixels[:3*s.rows*s.cols], labels: []byte{0, 1, 2}}
	writeFile(t, dir, src.Train, gzipBytes(t, s.images()))
	writeFile(t, dir, src.TrainLabels, gzipBytes(t, s.labelFile()))
	writeFile(t, dir, src.Test, gzipBytes(t, small.images()))
	writeFile(t, dir, src.TestLabels, gzipBytes(t, small.labelFile()))
	return src
}

func TestIDXSourceLoad(t *testing.T) {
	dir := t.TempDir()
	s := newIDXSample()
	src := writeSource(t, dir, s)
	if m := src.Missing(); m != nil {
		t.Fatalf("Missing() = %v with all files present", m)
	}
	train, test, err := src.Load()
	if err != nil {
		t.Fatal(err)
	}
	s.check(t, train)
	// The test set's labels stop at 2, but it shares the train set's classes.
	if test.N != 3 || test.D != train.D || test.C != 5 {
		t.Errorf("test: N=%d D=%d C=%d, want 3, %d, 5", test.N, test.D, test.C, train.D)
	}
}

func TestIDXSourceMissing(t *testing.T) {
	dir := t.TempDir()
	src := writeSource(t, dir, newIDXSample())
	os.Remove(filepath.Join(dir, src.TrainLabels))
	os.Remove(filepath.Join(dir, src.Test))
	want := []string{filepath.Join(dir, src.TrainLabels), filepath.Join(dir, src.Test)}
	if got := src.Missing(); !slices.Equal(got, want) {
		t.Errorf("Missing() = %v, want %v", got, want)
	}
	_, _, err := src.Load()
	if err == nil {
		t.Fatal("Load with missing files succeeded")
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not name %s", err, w)
		}
	}
	for _, present := range []string{src.Train, src.TestLabels} {
		if strings.Contains(err.Error(), present) {
			t.Errorf("error %q names %s, which is present", err, present)
		}
	}
	if strings.Contains(err.Error(), "apt-get") {
		t.Errorf("error %q suggests a package for a non-default directory", err)
	}

	// Fashion-MNIST in its default directory names the package. Use file
	// names that cannot exist so that this holds whether or not it is
	// installed.
	fm := FashionMNIST("")
	if fm.Dir != FashionMNISTDir {
		t.Errorf("FashionMNIST(\"\").Dir = %q", fm.Dir)
	}
	fm.Test = "no-such-file-idx3-ubyte.gz"
	_, _, err = fm.Load()
	if err == nil || !strings.Contains(err.Error(), "install them with: apt-get install dataset-fashion-mnist") ||
		!strings.Contains(err.Error(), filepath.Join(FashionMNISTDir, fm.Test)) {
		t.Errorf("Fashion-MNIST error %v lacks the missing file or the apt-get hint", err)
	}
	// Elsewhere it does not.
	_, _, err = FashionMNIST(dir).Load()
	if err == nil || strings.Contains(err.Error(), "apt-get") {
		t.Errorf("Fashion-MNIST in %s: error %v", dir, err)
	}
}

func TestIDXSourceNames(t *testing.T) {
	e := EMNIST("/d", "balanced")
	want := IDXSource{
		Name: "EMNIST balanced", Dir: "/d",
		Train:       "emnist-balanced-train-images-idx3-ubyte.gz",
		TrainLabels: "emnist-balanced-train-labels-idx1-ubyte.gz",
		Test:        "emnist-balanced-test-images-idx3-ubyte.gz",
		TestLabels:  "emnist-balanced-test-labels-idx1-ubyte.gz",
	}
	if e != want {
		t.Errorf("EMNIST = %+v, want %+v", e, want)
	}
	m := MNIST("")
	if m.Dir != "" || m.Train != "train-images-idx3-ubyte.gz" || m.TestLabels != "t10k-labels-idx1-ubyte.gz" {
		t.Errorf("MNIST(\"\") = %+v", m)
	}
	// Absolute file names are used as they are.
	abs := IDXSource{Dir: "/d", Train: "/elsewhere/x", TrainLabels: "y", Test: "z", TestLabels: "w"}
	if got := abs.Missing(); got[0] != "/elsewhere/x" || got[1] != "/d/y" {
		t.Errorf("Missing() = %v", got)
	}
}

// Fashion-MNIST is loaded at most once per test binary.
var fashion struct {
	once        sync.Once
	train, test *Dataset
	err         error
	took        time.Duration
}

// loadFashion returns the installed Fashion-MNIST, skipping the test when
// the files are absent.
func loadFashion(t *testing.T) (train, test *Dataset) {
	t.Helper()
	src := FashionMNIST("")
	if m := src.Missing(); m != nil {
		t.Skipf("Fashion-MNIST not installed (missing %v); apt-get install %s", m, FashionMNISTPackage)
	}
	fashion.once.Do(func() {
		start := time.Now()
		fashion.train, fashion.test, fashion.err = src.Load()
		fashion.took = time.Since(start)
	})
	if fashion.err != nil {
		t.Fatal(fashion.err)
	}
	return fashion.train, fashion.test
}

func TestFashionMNIST(t *testing.T) {
	train, test := loadFashion(t)
	t.Logf("loaded Fashion-MNIST in %v", fashion.took)
	for _, s := range []struct {
		name string
		d    *Dataset
		n    int
	}{{"train", train, 60000}, {"test", test, 10000}} {
		d := s.d
		if d.N != s.n || d.D != 784 || d.C != 10 {
			t.Errorf("%s: N=%d D=%d C=%d, want %d, 784, 10", s.name, d.N, d.D, d.C, s.n)
		}
		d.CheckShape()
		x := d.Floats()
		lo, hi := slices.Min(x), slices.Max(x)
		if lo != 0 || hi != 1 {
			t.Errorf("%s: pixels in [%v, %v], want [0, 1]", s.name, lo, hi)
		}
		// Fashion-MNIST is balanced: every class has N/10 examples.
		counts := make([]int, 10)
		for _, y := range d.Y {
			counts[y]++
		}
		for c, k := range counts {
			if k != s.n/10 {
				t.Errorf("%s: class %d has %d examples, want %d", s.name, c, k, s.n/10)
			}
		}
	}
}

// A gzip file's data buffer starts at idxPiece bytes (this file compresses
// well) and doubles as it fills; 200 images of 28×28 pixels make it grow
// twice, the last time to the count, and the first fill ends inside an
// image.
func TestLoadIDXPieces(t *testing.T) {
	s := idxSample{n: 200, rows: 28, cols: 28}
	s.pixels = make([]byte, s.n*s.rows*s.cols)
	for i := range s.pixels {
		s.pixels[i] = byte(i * 37 % 256)
	}
	s.pixels[0], s.pixels[1] = 0, 255
	s.labels = make([]byte, s.n)
	for i := range s.labels {
		s.labels[i] = byte(i % 5)
	}
	if len(s.pixels) <= 2*idxPiece || len(s.pixels)%idxPiece == 0 || idxPiece%(s.rows*s.cols) == 0 {
		t.Fatalf("%d pixels do not fill more than two pieces of %d bytes, the last one partial", len(s.pixels), idxPiece)
	}
	dir := t.TempDir()
	img, lbl := gzipBytes(t, s.images()), gzipBytes(t, s.labelFile())
	for _, imgFile := range [][]byte{img, s.images()} {
		d, err := LoadIDX(writeFile(t, dir, "img", imgFile), writeFile(t, dir, "lbl", lbl))
		if err != nil {
			t.Fatal(err)
		}
		s.check(t, d)
	}

	// The same stream without its last 150 images (and gzip trailer).
	short := gzipBytes(t, s.images()[:16+50*28*28])
	short = short[:len(short)-8]
	_, err := LoadIDX(writeFile(t, dir, "short", short), writeFile(t, dir, "lbl", lbl))
	if err == nil || !strings.Contains(err.Error(), "truncated: file ends inside image 50 of 200") {
		t.Errorf("gzip stream ending after 50 of 200 images: error %v", err)
	}
}
