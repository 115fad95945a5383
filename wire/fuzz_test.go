package wire

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"hgpsim/optim"
)

// fuzzRecordClients is the network of the delivery records FuzzMessages
// applies columns to.
const fuzzRecordClients = 8

// FuzzMessages decodes any bytes as each message a worker or the
// supervisor receives, and everything such a message carries of package
// optim: a message from the network is refused with an error, never a
// panic.
func FuzzMessages(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.hex")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		raw, err := hex.DecodeString(strings.TrimSpace(string(b)))
		if err != nil {
			f.Fatal(err)
		}
		for kind := range uint8(len(fuzzMessages)) {
			f.Add(raw, kind)
		}
	}
	rec := optim.NewDeliveryRecord(fuzzRecordClients)
	f.Add(NewRecordColumns(rec, 2, 5), uint8(0))
	f.Fuzz(func(t *testing.T, b []byte, kind uint8) {
		if len(b) > 1<<16 {
			t.Skipf("%d bytes", len(b))
		}
		m := fuzzMessages[int(kind)%len(fuzzMessages)]()
		if proto.Unmarshal(b, m) != nil {
			return
		}
		decodeAll(m)
		// The bytes as a delivery record's columns, as both sides read them.
		_, _, _ = ApplyRecordColumns(optim.NewDeliveryRecord(fuzzRecordClients), b)
	})
}

// fuzzMessages makes each message of the wire format.
var fuzzMessages = []func() proto.Message{
	func() proto.Message { return &WorkerStep{} },
	func() proto.Message { return &PeerBatch{} },
	func() proto.Message { return &WorkerAck{} },
	func() proto.Message { return &PeerParams{} },
	func() proto.Message { return &Built{} },
	func() proto.Message { return &Setup{} },
	func() proto.Message { return &Hosted{} },
	func() proto.Message { return &Heartbeat{} },
	func() proto.Message { return &Release{} },
}

// decodeAll calls every decoder of m, as its receiver does.
func decodeAll(m proto.Message) {
	rec := optim.NewDeliveryRecord(fuzzRecordClients)
	switch m := m.(type) {
	case *WorkerStep:
		_, _ = m.OptimSpec()
		_, _ = m.OptimLate()
		_, _, _ = ApplyRecordColumns(rec, m.Record)
	case *PeerBatch:
		_, _ = m.OptimOutboxes()
	case *WorkerAck:
		_ = m.Err()
		if n := len(m.Stats); n <= 1<<10 {
			_ = m.OptimStats(make([]optim.Stats, n))
		}
		if n := len(m.Results); n <= 1<<10 {
			_ = m.OptimResults(make([]optim.Result, n))
		}
		_, _ = m.OptimLate()
		_, _, _ = ApplyRecordColumns(rec, m.Record)
	case *PeerParams:
		_, _ = m.Vectors(len(m.GetLens()))
	case *Built:
		_ = m.Err()
	}
}
