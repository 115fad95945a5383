package vec

import "os"

func noAVX2() bool { return os.Getenv("HGPSIM_NOAVX2") == "1" }
