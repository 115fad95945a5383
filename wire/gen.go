package wire

// The generated code (hgpsim.pb.go) is committed, so that building hgpsim
// needs no protobuf compiler. To regenerate it after editing hgpsim.proto,
// with protoc (Debian: apt-get install protobuf-compiler; 3.21 here) and
// its Go plugin on PATH:
//
//	go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
//	go generate ./wire/

//go:generate protoc --go_out=. --go_opt=paths=source_relative hgpsim.proto
