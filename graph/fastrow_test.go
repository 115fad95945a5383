package graph

import "testing"

// The one-pass row parser agrees with the general one on what it accepts
// and leaves everything else to it.
func TestFastRowAgreesWithTheGeneralParser(t *testing.T) {
	for _, line := range []string{
		"0,0,1,1\n", "12,3,4,0\r\n", "7,1,2,1,3\n", "7,1,2,1,\n", "7,1,2,1", "007,01,2,1\n",
		"1,2,3,2\n", "1,,3,1\n", "1,2,3\n", "1,2,3,1,,\n", "1, 2,3,1\n", "1,2,3,1\rx\n", "#x\n", "\n",
		"1,2,3,1,2000\n", "99999999999999999999,1,2,1\n", "1,2,3,1,4,5\n",
	} {
		for _, hasDelay := range []bool{false, true} {
			var fast traceRow
			ok := fastRow([]byte(line), &fast, hasDelay)
			tr := &traceReader{header: true, hasDelay: hasDelay}
			var slow traceRow
			b := []byte(line)
			for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
				b = b[:len(b)-1]
			}
			sok, err := false, error(nil)
			if len(b) > 0 {
				sok, err = tr.parse(b, &slow)
			}
			if ok && (!sok || err != nil || fast != slow) {
				t.Errorf("%q (delay column %v): fast %+v, general %+v %v %v", line, hasDelay, fast, slow, sok, err)
			}
		}
	}
}
