package datasets

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"
)

// The property FuzzLoadIDX checks, for any pair of files: LoadIDX either
// returns a Dataset equal to what refIDX decodes from the same bytes, or an
// error that names the offending file and agrees with refIDX that the input
// is bad. It never panics, allocates no more than the input justifies (see
// allocBudget), and returns quickly.
//
// The two flags gzip the bytes before they are loaded, so that the fuzzer
// can explore headers that lie about their counts inside valid gzip streams
// (mutating raw gzip bytes mostly breaks the CRC); pad adds that many bytes
// of gzip header extra field, which makes the compressed file larger without
// adding any data, the cheapest way to inflate what the file size seems to
// allow. Raw gzip bytes reach the loader too, with the flags off.
func FuzzLoadIDX(f *testing.F) {
	for _, seed := range idxFuzzSeeds(f) {
		f.Add(seed.img, seed.lbl, seed.gzImg, seed.gzLbl, seed.pad)
	}
	f.Fuzz(func(t *testing.T, img, lbl []byte, gzImg, gzLbl bool, pad uint16) {
		// The mutator lets inputs grow to megabytes, which only slows each
		// execution (and the minimization of each new input) down: no code
		// path needs more than a few kilobytes to reach.
		if len(img) > maxFuzzInput || len(lbl) > maxFuzzInput {
			t.Skipf("%d + %d bytes of input, more than %d per file", len(img), len(lbl), maxFuzzInput)
		}
		if gzImg {
			img = gzipPadded(t, img, int(pad))
		}
		if gzLbl {
			lbl = gzipPadded(t, lbl, int(pad))
		}
		checkLoadIDX(t, img, lbl, false)
	})
}

// maxFuzzInput bounds each file of FuzzLoadIDX, before compression.
const maxFuzzInput = 256 << 10

type idxFuzzSeed struct {
	img, lbl     []byte
	gzImg, gzLbl bool
	pad          uint16
}

// idxFuzzSeeds returns small valid pairs in every compression mode, and a
// few broken ones.
func idxFuzzSeeds(t testing.TB) []idxFuzzSeed {
	s := newIDXSample()
	img, lbl := s.images(), s.labelFile()
	one := idxSample{n: 1, rows: 1, cols: 1, pixels: []byte{200}, labels: []byte{9}}
	var seeds []idxFuzzSeed
	for _, p := range [][2][]byte{{img, lbl}, {one.images(), one.labelFile()}} {
		seeds = append(seeds,
			idxFuzzSeed{img: p[0], lbl: p[1]},
			idxFuzzSeed{img: p[0], lbl: p[1], gzImg: true, gzLbl: true},
			idxFuzzSeed{img: p[0], lbl: p[1], gzImg: true},
			idxFuzzSeed{img: gzipPadded(t, p[0], 0), lbl: gzipPadded(t, p[1], 0)}, // raw gzip bytes
		)
	}
	seeds = append(seeds,
		idxFuzzSeed{img: img[:len(img)-1], lbl: lbl},
		idxFuzzSeed{img: img, lbl: lbl[:len(lbl)-1]},
		idxFuzzSeed{img: gzipPadded(t, img, 0)[:30], lbl: lbl},
		idxFuzzSeed{img: append([]byte{0x1f, 0x8b}, img...), lbl: lbl},
		idxFuzzSeed{img: lbl, lbl: img},
		idxFuzzSeed{img: nil, lbl: nil},
		// Headers that promise far more than the file holds; in the padded
		// gzip files, less than the deflate ratio allows (2^16·784 and 2^25
		// < 1100·60000), so only the reading itself can catch the lie.
		idxFuzzSeed{img: idxBytes(idxImagesMagic, []uint32{1 << 31, 28, 28}, nil), lbl: lbl},
		idxFuzzSeed{img: idxBytes(idxImagesMagic, []uint32{1 << 16, 28, 28}, s.pixels), lbl: lbl, gzImg: true, pad: 60000},
		idxFuzzSeed{img: img, lbl: idxBytes(idxLabelsMagic, []uint32{1 << 25}, s.labels), gzLbl: true, pad: 60000},
	)
	return seeds
}

// gzipPadded compresses b with pad bytes of gzip header extra field (the
// reader refuses names and comments beyond 511 bytes, but takes up to 65535
// bytes of extra field). One writer is reused, because gzip.NewWriter
// allocates about a megabyte, and not through a sync.Pool, whose emptying
// by the garbage collector would make the fuzzer's coverage of an input
// vary from one run to the next.
func gzipPadded(t testing.TB, b []byte, pad int) []byte {
	t.Helper()
	gzipWriter.Lock()
	defer gzipWriter.Unlock()
	var out bytes.Buffer
	w := gzipWriter.w
	w.Reset(&out)
	w.Extra = bytes.Repeat([]byte{'x'}, pad)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

var gzipWriter = struct {
	sync.Mutex
	w *gzip.Writer
}{w: gzip.NewWriter(nil)}

// maxLoadTime is how long one LoadIDX of a fuzz input may take. Inputs are
// at most a few hundred kilobytes; the bound is loose so that a loaded CI
// machine does not flake, and catches only gross slowness.
const maxLoadTime = 5 * time.Second

// checkLoadIDX loads img and lbl and checks the property of FuzzLoadIDX.
// With disk, they are written to files for LoadIDX; without, they are
// handed to loadIDX from memory, which is the same code but for os.Open and
// Stat, and a hundred times faster than ext4 at creating a file per input.
func checkLoadIDX(t *testing.T, img, lbl []byte, disk bool) {
	imgPath, lblPath := "mem/images", "mem/labels"
	open := memFiles(map[string][]byte{imgPath: img, lblPath: lbl})
	load := func() (*Dataset, error) { return loadIDX(open, imgPath, lblPath) }
	if disk {
		dir := t.TempDir()
		imgPath = writeFile(t, dir, "images", img)
		lblPath = writeFile(t, dir, "labels", lbl)
		load = func() (*Dataset, error) { return LoadIDX(imgPath, lblPath) }
	}
	want, wantBad := refIDX(img, lbl)
	budget := allocBudget(img) + allocBudget(lbl)

	before := heapAllocs()
	start := time.Now()
	d, err := load()
	took := time.Since(start)
	alloc := heapAllocs() - before

	if took > maxLoadTime {
		t.Errorf("LoadIDX took %v on %d + %d bytes", took, len(img), len(lbl))
	}
	if alloc > budget {
		alloc = exactAllocs(func() { load() })
	}
	if alloc > budget {
		t.Errorf("LoadIDX allocated %d bytes on %d + %d bytes of input, budget %d", alloc, len(img), len(lbl), budget)
	}
	if err != nil {
		if d != nil {
			t.Errorf("LoadIDX returned both a Dataset and the error %v", err)
		}
		msg := err.Error()
		switch wantBad {
		case "":
			t.Fatalf("LoadIDX refused files the reference decodes (N=%d D=%d C=%d): %v", want.N, want.D, want.C, err)
		case "images":
			if !strings.Contains(msg, imgPath) {
				t.Errorf("bad images: error %q does not name %s", msg, imgPath)
			}
		case "labels":
			if !strings.Contains(msg, lblPath) {
				t.Errorf("bad labels: error %q does not name %s", msg, lblPath)
			}
		case "count":
			if !strings.Contains(msg, imgPath) || !strings.Contains(msg, lblPath) {
				t.Errorf("count mismatch: error %q does not name both files", msg)
			}
		}
		return
	}
	if wantBad != "" && wantBad != "unknown" {
		t.Fatalf("LoadIDX accepted files the reference refuses (%s): N=%d D=%d C=%d", wantBad, d.N, d.D, d.C)
	}
	checkIDXDataset(t, d)
	if wantBad == "unknown" {
		return
	}
	if d.N != want.N || d.D != want.D || d.C != want.C {
		t.Fatalf("N=%d D=%d C=%d, reference N=%d D=%d C=%d", d.N, d.D, d.C, want.N, want.D, want.C)
	}
	x := d.Floats()
	for i := range want.X {
		if x[i] != want.X[i] {
			t.Fatalf("X[%d] = %v, reference %v", i, x[i], want.X[i])
		}
	}
	for i := range want.Y {
		if d.Y[i] != want.Y[i] {
			t.Fatalf("Y[%d] = %d, reference %d", i, d.Y[i], want.Y[i])
		}
	}
}

// memFiles opens the entries of files, keyed by path.
func memFiles(files map[string][]byte) openFunc {
	return func(path string) (io.ReadCloser, int64, error) {
		b, ok := files[path]
		if !ok {
			return nil, 0, &iofs.PathError{Op: "open", Path: path, Err: iofs.ErrNotExist}
		}
		return io.NopCloser(bytes.NewReader(b)), int64(len(b)), nil
	}
}

// heapAllocs returns the bytes allocated on the heap so far, as far as the
// runtime has counted them. Unlike runtime.ReadMemStats it does not stop the
// world (which takes a fifth of a millisecond here), but small objects are
// counted only when their span leaves a P's cache: an allocation made before
// a measurement can be counted inside it, when a span is refilled or the
// garbage collector flushes the caches. The difference of two calls can
// thus exceed what happened between them, by up to a few hundred KiB in
// the fuzzer; exactAllocs settles the cases that matter.
func heapAllocs() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// exactAllocs returns the bytes that f allocates on the heap, counted after
// flushing every P's cache (runtime.ReadMemStats does), so that nothing
// allocated before f is counted.
func exactAllocs(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// checkIDXDataset checks what holds for every Dataset LoadIDX returns.
func checkIDXDataset(t *testing.T, d *Dataset) {
	t.Helper()
	if d == nil {
		t.Fatal("LoadIDX returned neither a Dataset nor an error")
	}
	xs := d.Floats()
	if d.N < 0 || d.D < 1 || d.C < 2 || d.C > 256 || len(xs) != d.N*d.D || len(d.Y) != d.N {
		t.Fatalf("malformed Dataset: N=%d D=%d C=%d len(X)=%d len(Y)=%d", d.N, d.D, d.C, len(xs), len(d.Y))
	}
	for i, x := range xs {
		if !(x >= 0 && x <= 1) {
			t.Fatalf("X[%d] = %v, outside [0, 1]", i, x)
		}
	}
	for i, y := range d.Y {
		if y < 0 || y >= d.C {
			t.Fatalf("Y[%d] = %d, outside [0, %d)", i, y, d.C)
		}
	}
}

// refDecompressLimit bounds what refIDX decompresses; beyond it the
// reference gives up ("unknown") and only the Dataset invariants are checked.
const refDecompressLimit = 64 << 20

// refIDX decodes a pair of IDX files the simplest way: everything in memory,
// every field checked against the format. It returns the Dataset, or which
// part is bad: "images", "labels", "count" (they disagree on N), or
// "unknown" when a file decompresses to more than refDecompressLimit.
func refIDX(img, lbl []byte) (*Dataset, string) {
	rawImg, err := refGunzip(img)
	if err != nil {
		return nil, refBad("images", err)
	}
	if len(rawImg) < 16 || binary.BigEndian.Uint32(rawImg) != idxImagesMagic {
		return nil, "images"
	}
	// In uint64, rows·cols < 2^64 cannot wrap, and neither can n·rows·cols
	// once rows·cols ≤ maxIDXValues.
	n := uint64(binary.BigEndian.Uint32(rawImg[4:]))
	rows := uint64(binary.BigEndian.Uint32(rawImg[8:]))
	cols := uint64(binary.BigEndian.Uint32(rawImg[12:]))
	if rows == 0 || cols == 0 || rows*cols > maxIDXValues || n*rows*cols > maxIDXValues ||
		uint64(len(rawImg)) != 16+n*rows*cols {
		return nil, "images"
	}
	rawLbl, err := refGunzip(lbl)
	if err != nil {
		return nil, refBad("labels", err)
	}
	if len(rawLbl) < 8 || binary.BigEndian.Uint32(rawLbl) != idxLabelsMagic ||
		int64(len(rawLbl)) != 8+int64(binary.BigEndian.Uint32(rawLbl[4:])) {
		return nil, "labels"
	}
	if uint64(len(rawLbl)-8) != n {
		return nil, "count"
	}
	d := &Dataset{N: int(n), D: int(rows * cols), C: 2}
	for _, p := range rawImg[16:] {
		d.X = append(d.X, float64(p)/255)
	}
	for _, l := range rawLbl[8:] {
		d.Y = append(d.Y, int(l))
		d.C = max(d.C, int(l)+1)
	}
	return d, ""
}

var errRefTooBig = errors.New("decompresses to too much")

func refBad(file string, err error) string {
	if errors.Is(err, errRefTooBig) {
		return "unknown"
	}
	return file
}

// refGunzip returns b, decompressed if it starts with the gzip magic.
func refGunzip(b []byte) ([]byte, error) {
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		return b, nil
	}
	z, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	out, err := io.ReadAll(io.LimitReader(z, refDecompressLimit+1))
	if err != nil {
		return nil, err
	}
	if len(out) > refDecompressLimit {
		return nil, errRefTooBig
	}
	return out, nil
}

// allocBudget is how many bytes LoadIDX may allocate for a file of bytes b:
// a fixed amount for the readers, plus a multiple of what the file really
// holds (its size, or for gzip what it decompresses to). Each value is read
// as a byte and becomes a float64 or an int: 9 bytes.
func allocBudget(b []byte) uint64 {
	// Two 64 KiB bufio buffers, the gzip reader (mostly its 32 KiB window)
	// and the first 64 KiB piece of data come to about 240 KiB.
	const fixed = 384 << 10
	n := len(b)
	if raw, err := refGunzip(b); err == nil {
		n += len(raw)
	} else if errors.Is(err, errRefTooBig) {
		n += refDecompressLimit
	}
	return fixed + 16*uint64(n)
}

// TestLoadIDXAllocations runs the fuzz property on the inputs it matters
// most for: tiny files whose headers claim huge counts. A gzip file is
// padded with a header extra field, so that the ratio check (which only looks at
// the compressed size) lets the claim through; the loader must still
// allocate in step with what it actually decompresses.
func TestLoadIDXAllocations(t *testing.T) {
	s := newIDXSample()
	img, lbl := s.images(), s.labelFile()
	// Each claim is below what the compressed size allows at the deflate
	// ratio: 80·784 < 1100·60 bytes, 2^16·784 and 2^25 < 1100·60000.
	smallClaim := idxBytes(idxImagesMagic, []uint32{80, 28, 28}, s.pixels)
	hugeImages := idxBytes(idxImagesMagic, []uint32{1 << 16, 28, 28}, s.pixels)
	hugeLabels := idxBytes(idxLabelsMagic, []uint32{1 << 25}, s.labels)
	for _, tc := range []struct {
		name     string
		img, lbl []byte
	}{
		{"plain images claim 2^31 values", idxBytes(idxImagesMagic, []uint32{1 << 31, 1, 1}, nil), lbl},
		{"plain labels claim 2^31", img, idxBytes(idxLabelsMagic, []uint32{1 << 31}, nil)},
		{"no images of 2^31 pixels", idxBytes(idxImagesMagic, []uint32{0, 1 << 16, 1 << 15}, nil), idxBytes(idxLabelsMagic, []uint32{0}, nil)},
		{"gzip images claim 80", gzipPadded(t, smallClaim, 0), lbl},
		{"padded gzip images claim 2^16", gzipPadded(t, hugeImages, 60000), lbl},
		{"padded gzip labels claim 2^25", img, gzipPadded(t, hugeLabels, 60000)},
	} {
		for _, disk := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/disk=%t", tc.name, disk), func(t *testing.T) { checkLoadIDX(t, tc.img, tc.lbl, disk) })
		}
	}
}
