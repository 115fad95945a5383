// Package testscen holds the small scenarios the tests of several packages
// share, so that each is written once.
//
// It imports the standard library only; only tests import it.
package testscen
