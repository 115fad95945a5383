// Package families links every algorithm family and fault package of
// hgpsim. Each family registers its algorithms (and faults) from init
// functions; importing this package for its side effects makes them all
// available to scenarios, validation and `hgpsim list`. A new family
// package adds one import line here and nothing else.
//
// It may import the family packages only.
package families

import (
	_ "hgpsim/optim/faults"      // client faults: byzantine, straggler
	_ "hgpsim/optim/fbo"         // FedNest, LFedNest, FBO-AggITD
	_ "hgpsim/optim/fed"         // FedAvg, FedProx, Ditto, pFedMe
	_ "hgpsim/optim/fedbio"      // Comm-FedBiO, FedAvg-Oracle, Preprocess
	_ "hgpsim/optim/nodeweights" // weighted-nodes, Local-SVRG, local training
	_ "hgpsim/optim/pdbo"        // PDBO: SGP, HGP, VR-HGP, exact, local (the default algorithm)
)
