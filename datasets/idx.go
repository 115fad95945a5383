package datasets

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// IDX is the file format of MNIST, EMNIST and Fashion-MNIST (LeCun et al.,
// "The MNIST database"): a big-endian header, then the values in row-major
// order. The magic number's bytes are 0, 0, the element type (0x08 for
// unsigned byte) and the number of dimensions; each dimension follows as a
// big-endian uint32.
const (
	idxImagesMagic = 0x00000803 // uint8, 3 dimensions: N × rows × cols
	idxLabelsMagic = 0x00000801 // uint8, 1 dimension: N
)

// maxIDXValues bounds N·rows·cols of an image file, so that a corrupt header
// gives an error instead of a 2 GiB allocation. It is 2^31 on 64-bit
// platforms; on 32-bit ones it is lowered so that the pixels (one byte each,
// up to 1.5 times while a gzip file is read) fit in the address space.
const maxIDXValues = min(1<<31, math.MaxInt/2)

// idxPiece is the least a gzip file's data buffer starts at (see readData).
const idxPiece = 64 << 10

// gzipTrust is how many bytes of data per compressed byte readData allocates
// before any arrives: more than images compress by (MNIST: 4.7,
// Fashion-MNIST: 1.8), so that their buffer is allocated once, at its size.
const gzipTrust = 8

// maxDeflateRatio bounds how many bytes deflate can expand one compressed
// byte into (the format's limit is about 1032:1). A gzip file whose header
// claims more data than this allows is truncated, and is refused before
// anything is allocated.
const maxDeflateRatio = 1100

// LoadIDX reads an IDX image file (idx3-ubyte) and its IDX label file
// (idx1-ubyte) into a Dataset. Either file may be gzip-compressed; this is
// detected from the gzip magic bytes 0x1f 0x8b, not from the file name.
//
// Each N×rows×cols image becomes a row of D = rows·cols features, pixel/255,
// so every feature lies in [0, 1]. The Dataset is coded: it keeps the pixel
// bytes as Codes and the 256 values p/255 as Levels, one byte per feature.
// Labels become Y, and C = max label + 1, at least 2. Pixels keep the
// file's order; for EMNIST that is the transpose of the upright image,
// which is immaterial to models that do not look at the spatial layout.
//
// Every problem with the files (missing, wrong magic, truncated, trailing
// data, counts that disagree, sizes beyond 2^31 values) is returned as an
// error that names the file; LoadIDX does not panic on any input.
//
// Memory is bounded by what the files hold, whatever their headers claim: a
// plain file's size must account for every value before anything is
// allocated, and a gzip file's data buffer starts at 8 times the file's size
// and grows only as decompressed data fills it.
func LoadIDX(imagesPath, labelsPath string) (*Dataset, error) {
	return loadIDX(openOSFile, imagesPath, labelsPath)
}

// openFunc opens the file at path for reading and returns its size in bytes.
// LoadIDX uses openOSFile; tests substitute files held in memory.
type openFunc func(path string) (io.ReadCloser, int64, error)

// openOSFile opens a file of the operating system.
func openOSFile(path string) (io.ReadCloser, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err // *PathError names the file
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}

// loadIDX is LoadIDX with the files opened by open.
func loadIDX(open openFunc, imagesPath, labelsPath string) (*Dataset, error) {
	codes, n, d, err := readIDXImages(open, imagesPath)
	if err != nil {
		return nil, err
	}
	y, err := readIDXLabels(open, labelsPath)
	if err != nil {
		return nil, err
	}
	if len(y) != n {
		return nil, fmt.Errorf("datasets: %s has %d images but %s has %d labels", imagesPath, n, labelsPath, len(y))
	}
	c := 2
	for _, l := range y {
		c = max(c, l+1)
	}
	return &Dataset{Codes: codes, Levels: byteLevels(), Y: y, N: n, D: d, C: c}, nil
}

// idxFile is an open IDX file, decompressed if need be.
type idxFile struct {
	c    io.Closer
	gz   *gzip.Reader // nil for a plain file
	r    *bufio.Reader
	path string
	size int64 // size on disk
}

// openIDX opens path and sniffs the gzip magic.
func openIDX(open openFunc, path string) (*idxFile, error) {
	f, size, err := open(path)
	if err != nil {
		return nil, fmt.Errorf("datasets: %w", err) // *PathError names the file
	}
	file := &idxFile{c: f, path: path, size: size}
	br := bufio.NewReaderSize(f, 1<<16)
	magic, err := br.Peek(2)
	if err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		if file.gz, err = gzip.NewReader(br); err != nil {
			f.Close()
			return nil, file.errorf("reading gzip header: %w", err)
		}
		file.r = bufio.NewReaderSize(file.gz, 1<<16)
	} else {
		// A file shorter than 2 bytes is caught by the header read.
		file.r = br
	}
	return file, nil
}

func (f *idxFile) Close() error { return f.c.Close() }

func (f *idxFile) errorf(format string, args ...any) error {
	return fmt.Errorf("datasets: %s: %w", f.path, fmt.Errorf(format, args...))
}

// wrap turns a read error into one naming the file, calling a premature end
// of the data what it is.
func (f *idxFile) wrap(what string, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("datasets: %s: truncated: file ends inside %s", f.path, what)
	}
	return fmt.Errorf("datasets: %s: reading %s: %w", f.path, what, err)
}

// header reads the magic and the dimensions, checking the magic against want.
// The dimensions are int64 so that none is negative on a 32-bit platform;
// each is below 2^32, so the product of two of them can still overflow.
func (f *idxFile) header(want uint32, kind string) ([]int64, error) {
	var magic uint32
	if err := binary.Read(f.r, binary.BigEndian, &magic); err != nil {
		return nil, f.wrap("the header", err)
	}
	if magic != want {
		return nil, f.errorf("bad magic 0x%08x, want 0x%08x (%s)", magic, want, kind)
	}
	dims := make([]int64, want&0xff)
	for k := range dims {
		var v uint32
		if err := binary.Read(f.r, binary.BigEndian, &v); err != nil {
			return nil, f.wrap("the header", err)
		}
		dims[k] = int64(v)
	}
	return dims, nil
}

// checkPayload refuses a header that claims more data than the file can
// hold: exactly for a plain file, by the deflate expansion limit for gzip.
func (f *idxFile) checkPayload(headerBytes, payload int64) error {
	if f.gz == nil {
		if have := f.size - headerBytes; have < payload {
			return f.errorf("truncated: header promises %d bytes of data, file holds %d", payload, max(have, 0))
		}
		return nil
	}
	if payload > maxDeflateRatio*f.size {
		return f.errorf("truncated: header promises %d bytes of data, more than %d compressed bytes can hold", payload, f.size)
	}
	return nil
}

// readData reads the count bytes of data that follow the header into one
// slice; where describes the item that holds byte done, for the error on a
// premature end.
//
// A plain file's size was checked against count by checkPayload, so its
// slice is allocated at once. A gzip stream's length is known only once it
// has been decompressed, and the deflate ratio lets a small file claim a
// thousand times its size: its slice starts at gzipTrust times the
// compressed size (at least idxPiece, at most count) and doubles, up to
// count, only when data has filled it, so that a header that lies about the
// count costs at most a few times the data that really follows it.
func (f *idxFile) readData(count int, where func(done int) string) ([]byte, error) {
	n := count
	if f.gz != nil {
		n = int(min(int64(count), max(idxPiece, gzipTrust*f.size)))
	}
	buf := make([]byte, n)
	for done := 0; ; {
		k, err := io.ReadFull(f.r, buf[done:])
		done += k
		if err != nil {
			return nil, f.wrap(where(done), err)
		}
		if done == count {
			return buf, nil
		}
		grown := make([]byte, min(count, 2*len(buf)))
		copy(grown, buf)
		buf = grown
	}
}

// atEOF checks that nothing follows the data and, for gzip, that the stream
// ends cleanly (the CRC and length in the trailer are verified on EOF).
func (f *idxFile) atEOF() error {
	switch _, err := f.r.ReadByte(); {
	case err == nil:
		return f.errorf("trailing data after the last item (header and data disagree)")
	case errors.Is(err, io.EOF):
		return nil
	default:
		return f.wrap("the end of the data", err)
	}
}

// readIDXImages returns the pixel bytes of an idx3-ubyte file.
func readIDXImages(open openFunc, path string) (codes []uint8, n, d int, err error) {
	f, err := openIDX(open, path)
	if err != nil {
		return nil, 0, 0, err
	}
	defer f.Close()
	dims, err := f.header(idxImagesMagic, "idx3-ubyte images")
	if err != nil {
		return nil, 0, 0, err
	}
	n64, rows, cols := dims[0], dims[1], dims[2]
	if rows == 0 || cols == 0 {
		return nil, 0, 0, f.errorf("images of %d×%d pixels", rows, cols)
	}
	// Each dimension is below 2^32, so a product of two can exceed 2^63 and
	// wrap around to a negative int64: compare by division first. Once
	// d64 ≤ maxIDXValues ≤ 2^31, n64·d64 < 2^63.
	if rows > maxIDXValues/cols {
		return nil, 0, 0, f.errorf("images of %d×%d pixels are more than the limit of %d values each",
			rows, cols, int64(maxIDXValues))
	}
	d64 := rows * cols
	total := n64 * d64
	if total > maxIDXValues {
		return nil, 0, 0, f.errorf("%d images of %d×%d pixels is %d values, more than the limit of %d",
			n64, rows, cols, total, int64(maxIDXValues))
	}
	if err := f.checkPayload(16, total); err != nil {
		return nil, 0, 0, err
	}
	n, d = int(n64), int(d64)
	codes, err = f.readData(int(total), func(done int) string {
		return fmt.Sprintf("image %d of %d", done/d, n)
	})
	if err != nil {
		return nil, 0, 0, err
	}
	if err := f.atEOF(); err != nil {
		return nil, 0, 0, err
	}
	return codes, n, d, nil
}

// readIDXLabels returns the labels of an idx1-ubyte file.
func readIDXLabels(open openFunc, path string) ([]int, error) {
	f, err := openIDX(open, path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	dims, err := f.header(idxLabelsMagic, "idx1-ubyte labels")
	if err != nil {
		return nil, err
	}
	n := dims[0]
	if n > maxIDXValues {
		return nil, f.errorf("%d labels, more than the limit of %d", n, int64(maxIDXValues))
	}
	if err := f.checkPayload(8, n); err != nil {
		return nil, err
	}
	labels, err := f.readData(int(n), func(int) string { return fmt.Sprintf("the %d labels", n) })
	if err != nil {
		return nil, err
	}
	if err := f.atEOF(); err != nil {
		return nil, err
	}
	y := make([]int, n)
	for i, l := range labels {
		y[i] = int(l)
	}
	return y, nil
}

// IDXSource names the four IDX files of a train/test image data set. File
// names are relative to Dir unless absolute.
type IDXSource struct {
	Name                                 string // for messages, e.g. "Fashion-MNIST"
	Dir                                  string
	Train, TrainLabels, Test, TestLabels string
}

// FashionMNISTDir is where the Debian-style package FashionMNISTPackage
// installs Fashion-MNIST, and the default directory of FashionMNIST.
const (
	FashionMNISTDir     = "/usr/share/datasets/fashion-mnist"
	FashionMNISTPackage = "dataset-fashion-mnist"
)

// standardIDXFiles returns the file names MNIST and Fashion-MNIST share.
func standardIDXFiles(name, dir string) IDXSource {
	return IDXSource{
		Name:        name,
		Dir:         dir,
		Train:       "train-images-idx3-ubyte.gz",
		TrainLabels: "train-labels-idx1-ubyte.gz",
		Test:        "t10k-images-idx3-ubyte.gz",
		TestLabels:  "t10k-labels-idx1-ubyte.gz",
	}
}

// FashionMNIST returns the Fashion-MNIST files in dir (Xiao et al. 2017:
// 60000 train and 10000 test images of 28×28 pixels, 10 classes). An empty
// dir means FashionMNISTDir.
func FashionMNIST(dir string) IDXSource {
	if dir == "" {
		dir = FashionMNISTDir
	}
	return standardIDXFiles("Fashion-MNIST", dir)
}

// MNIST returns the MNIST files in dir (60000 train and 10000 test digits of
// 28×28 pixels). There is no default directory.
func MNIST(dir string) IDXSource {
	return standardIDXFiles("MNIST", dir)
}

// EMNIST returns the files of one EMNIST split ("byclass", "bymerge",
// "balanced", "letters", "digits" or "mnist") in dir, named as in the
// official gzip distribution: emnist-<split>-train-images-idx3-ubyte.gz and
// so on. The "letters" split labels its classes 1…26, so its C is 27 with
// class 0 unused.
func EMNIST(dir, split string) IDXSource {
	p := "emnist-" + split + "-"
	return IDXSource{
		Name:        "EMNIST " + split,
		Dir:         dir,
		Train:       p + "train-images-idx3-ubyte.gz",
		TrainLabels: p + "train-labels-idx1-ubyte.gz",
		Test:        p + "test-images-idx3-ubyte.gz",
		TestLabels:  p + "test-labels-idx1-ubyte.gz",
	}
}

// path returns the path of one of s's files.
func (s IDXSource) path(name string) string {
	if filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(s.Dir, name)
}

// paths returns the paths of the train images, train labels, test images and
// test labels, in that order.
func (s IDXSource) paths() []string {
	return []string{s.path(s.Train), s.path(s.TrainLabels), s.path(s.Test), s.path(s.TestLabels)}
}

// Missing returns the paths of s's files that do not exist (or cannot be
// stat'ed), in the order train images, train labels, test images, test
// labels; nil when all four are present.
func (s IDXSource) Missing() []string {
	var out []string
	for _, p := range s.paths() {
		if _, err := os.Stat(p); err != nil {
			out = append(out, p)
		}
	}
	return out
}

// Load reads the train and test sets. When files are missing the error lists
// every missing path (and, for Fashion-MNIST in FashionMNISTDir, the package
// that installs them) before anything is read.
func (s IDXSource) Load() (train, test *Dataset, err error) {
	if miss := s.Missing(); len(miss) > 0 {
		msg := fmt.Sprintf("datasets: %s: missing %d of 4 files: %s", s.displayName(), len(miss), strings.Join(miss, ", "))
		if s.Name == "Fashion-MNIST" && filepath.Clean(s.Dir) == FashionMNISTDir {
			msg += "; install them with: apt-get install " + FashionMNISTPackage
		}
		return nil, nil, errors.New(msg)
	}
	p := s.paths()
	if train, err = LoadIDX(p[0], p[1]); err != nil {
		return nil, nil, err
	}
	if test, err = LoadIDX(p[2], p[3]); err != nil {
		return nil, nil, err
	}
	if train.D != test.D {
		return nil, nil, fmt.Errorf("datasets: %s: train images have %d pixels, test images %d", s.displayName(), train.D, test.D)
	}
	// Both sets describe the same classes even if one lacks the highest.
	c := max(train.C, test.C)
	train.C, test.C = c, c
	return train, test, nil
}

func (s IDXSource) displayName() string {
	if s.Name == "" {
		return "IDX data set"
	}
	return s.Name
}
