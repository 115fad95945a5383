package report

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot/vg/vgimg"

	"hgpsim/internal/fsutil"
)

// Palette is a colour-blind-safe set of line colours (Okabe–Ito).
var Palette = []color.RGBA{
	{0, 114, 178, 255}, {213, 94, 0, 255}, {0, 158, 115, 255}, {204, 121, 167, 255},
	{230, 159, 0, 255}, {86, 180, 233, 255}, {0, 0, 0, 255}, {153, 153, 153, 255},
}

// PNG renders a canvas as PNG bytes.
func PNG(img *vgimg.Canvas) ([]byte, error) {
	var buf bytesBuffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("rendering a PNG: %w", err)
	}
	return buf.b, nil
}

// WritePNG renders a canvas to path atomically.
func WritePNG(path string, img *vgimg.Canvas) error {
	b, err := PNG(img)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return fsutil.WriteAtomic(path, b)
}

type bytesBuffer struct{ b []byte }

func (w *bytesBuffer) Write(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }
