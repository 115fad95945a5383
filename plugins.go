package main

// Packages whose plug-ins register themselves from init functions and that
// nothing else imports: linking them makes their kinds available to
// scenarios, `hgpsim list` and validation.
import (
	_ "hgpsim/experiments"
)
