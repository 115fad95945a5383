package main

import (
	"bytes"
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"hgpsim/actors"
)

// secretEnv names the environment variable that holds the shared secret of
// workers and supervisors, when no --secret-file is given.
const secretEnv = "HGPSIM_WORKER_SECRET"

// minSecret is the shortest secret accepted: a guessable one is none.
const minSecret = 16

// securityFlags are the transport flags of hgpsim worker and of the
// commands that supervise workers.
type securityFlags struct {
	secretFile string
	cert, key  string
	ca         string
	mutual     bool
}

func addSecurityFlags(fs *pflag.FlagSet, f *securityFlags) {
	fs.StringVar(&f.secretFile, "secret-file", "", "file holding the workers' shared secret (default: the environment variable "+secretEnv+")")
	fs.StringVar(&f.cert, "tls-cert", "", "TLS certificate (PEM) of this process; with --tls-key turns TLS on (workers and supervisor alike)")
	fs.StringVar(&f.key, "tls-key", "", "TLS private key (PEM) of --tls-cert")
	fs.StringVar(&f.ca, "tls-ca", "", "CA certificate (PEM) that verifies the other side (default: the system's roots)")
	fs.BoolVar(&f.mutual, "tls-mutual", false, "require the other side to present a certificate signed by --tls-ca (mutual TLS)")
}

// security reads the secret (the file, else the environment) and returns
// the transport; an empty secret means none.
func (f securityFlags) security() (actors.Security, error) {
	sec := actors.Security{CertFile: f.cert, KeyFile: f.key, CAFile: f.ca, Mutual: f.mutual}
	if f.secretFile != "" {
		b, err := os.ReadFile(f.secretFile)
		if err != nil {
			return sec, usageError{"--secret-file: " + err.Error()}
		}
		// A trailing newline is an editor's, not the secret's.
		sec.Secret = bytes.TrimRight(b, "\r\n")
		if len(sec.Secret) == 0 {
			return sec, usageError{fmt.Sprintf("--secret-file: %s is empty", f.secretFile)}
		}
	} else {
		sec.Secret = []byte(os.Getenv(secretEnv))
	}
	if n := len(sec.Secret); n > 0 && n < minSecret {
		return sec, usageError{fmt.Sprintf("the worker secret has %d bytes, want at least %d (e.g. openssl rand -hex 32)", n, minSecret)}
	}
	if (f.cert == "") != (f.key == "") {
		return sec, usageError{"--tls-cert and --tls-key go together"}
	}
	if f.cert == "" && (f.ca != "" || f.mutual) {
		return sec, usageError{"--tls-ca and --tls-mutual need --tls-cert and --tls-key"}
	}
	if f.mutual && f.ca == "" {
		return sec, usageError{"--tls-mutual needs --tls-ca"}
	}
	return sec, nil
}
