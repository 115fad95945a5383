package vec

import "os"

func noAVX2() bool { return os.Getenv("HGPSIM_NOAVX2") == "1" }

func noAVX512() bool { return os.Getenv("HGPSIM_NOAVX512") == "1" }
