// Package families links every algorithm family and fault package of
// hgpsim. Each family registers its algorithms (and faults) from init
// functions; importing this package for its side effects makes them all
// available to scenarios, validation and `hgpsim list`. A new family
// package adds one import line here and nothing else.
//
// It may import the family packages only.
package families
