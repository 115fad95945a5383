package families

import (
	_ "hgpsim/optim/faults"      // client faults: byzantine, straggler
	_ "hgpsim/optim/fbo"         // FedNest, LFedNest, FBO-AggITD
	_ "hgpsim/optim/fed"         // FedAvg, FedProx, Ditto, pFedMe
	_ "hgpsim/optim/fedbio"      // Comm-FedBiO, FedAvg-Oracle, Preprocess
	_ "hgpsim/optim/nodeweights" // weighted-nodes, Local-SVRG, local training
	_ "hgpsim/optim/pdbo"        // PDBO: SGP, HGP, VR-HGP, exact, local (the default algorithm)
)
