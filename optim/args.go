package optim

import (
	"fmt"

	"hgpsim/internal/codec"
)

// Phase arguments and results are each algorithm's own types: a struct of
// plain data (numbers, bools, strings, vectors, nested structs) that the
// algorithm's program encodes into PhaseSpec.Args and its clients into
// Result.Data. Drivers move the bytes untouched, in one process or over
// the wire; only the algorithm, and whoever reads its results through its
// package, knows the type. The encoding is package wire's codec
// (internal/codec: protobuf's wire format, fields numbered by `wire`
// tags), so an argument added to a struct is a field, not a key.

// EncodeArgs encodes v, a struct of plain data, for PhaseSpec.Args, an
// entry of PhaseSpec.PerClient or Result.Data. A zero v encodes as no
// bytes. It panics on a type without an encoding, a programmer error.
func EncodeArgs[T any](v T) []byte {
	b := codec.MustMarshal(&v)
	if len(b) == 0 {
		return nil
	}
	return b
}

// DecodeArgs decodes what EncodeArgs encoded; no bytes give the zero T.
func DecodeArgs[T any](b []byte) (T, error) {
	var v T
	if err := codec.Unmarshal(b, &v); err != nil {
		return v, fmt.Errorf("decoding %T: %w", v, err)
	}
	return v, nil
}

// PutArgs sets p's arguments to v (see EncodeArgs).
func PutArgs[T any](p *PhaseSpec, v T) { p.Args = EncodeArgs(v) }

// ArgsOf returns p's arguments as the T that PutArgs stored; a phase
// without arguments gives the zero T.
func ArgsOf[T any](p *PhaseSpec) (T, error) {
	v, err := DecodeArgs[T](p.Args)
	if err != nil {
		return v, fmt.Errorf("phase %s: %w", p.Name, err)
	}
	return v, nil
}

// PutResult returns v as the Result of a phase (see EncodeArgs).
func PutResult[T any](v T) Result { return Result{Data: EncodeArgs(v)} }

// ResultOf returns the T that PutResult stored in r; a Result without
// data gives the zero T.
func ResultOf[T any](r Result) (T, error) { return DecodeArgs[T](r.Data) }

// ResultsOf returns every client's result as a T, indexed like rs.
func ResultsOf[T any](rs []Result) ([]T, error) {
	out := make([]T, len(rs))
	for i, r := range rs {
		var err error
		if out[i], err = ResultOf[T](r); err != nil {
			return nil, fmt.Errorf("client %d: %w", i, err)
		}
	}
	return out, nil
}
