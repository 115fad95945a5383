package actors

import (
	"context"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"

	"github.com/asynkron/protoactor-go/remote"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// secretKey is the gRPC metadata key that carries the shared secret.
const secretKey = "hgpsim-secret"

// Security is how a worker and its supervisor trust each other. Both ends
// of a connection need the same Secret, and, with TLS, certificates signed
// by the same CA: the supervisor dials its workers and the workers dial
// the supervisor back, so each side is both a server and a client.
//
// The zero Security is the insecure transport: plain gRPC, anyone who can
// reach the port is accepted.
type Security struct {
	// Secret, when not empty, is presented on every call this side makes
	// and required on every call it accepts; a call without it, or with
	// another, is refused with codes.Unauthenticated.
	Secret []byte
	// CertFile and KeyFile, when set, turn on TLS: this side's certificate
	// (PEM), used as a server and, with Mutual, as a client.
	CertFile, KeyFile string
	// CAFile is the CA (PEM) that verifies the peer's certificate; empty
	// means the system's roots.
	CAFile string
	// Mutual requires the peer to present a certificate signed by CAFile.
	Mutual bool
}

// TLS reports whether the transport is encrypted.
func (s Security) TLS() bool { return s.CertFile != "" }

// same reports whether two settings configure the same transport.
func (s Security) same(o Security) bool {
	return subtle.ConstantTimeCompare(s.Secret, o.Secret) == 1 && s.CertFile == o.CertFile &&
		s.KeyFile == o.KeyFile && s.CAFile == o.CAFile && s.Mutual == o.Mutual
}

// tlsConfig loads the certificates once for both directions.
func (s Security) tlsConfig() (*tls.Config, error) {
	if (s.CertFile == "") != (s.KeyFile == "") {
		return nil, errors.New("TLS needs both a certificate and its key")
	}
	if s.CertFile == "" {
		if s.CAFile != "" || s.Mutual {
			return nil, errors.New("a CA or mutual TLS needs a certificate and key (TLS is off without them)")
		}
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(s.CertFile, s.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("TLS certificate: %w", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if s.CAFile != "" {
		pem, err := os.ReadFile(s.CAFile)
		if err != nil {
			return nil, fmt.Errorf("TLS CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("TLS CA %s: no PEM certificate in it", s.CAFile)
		}
		cfg.RootCAs, cfg.ClientCAs = pool, pool
	}
	if s.Mutual {
		if s.CAFile == "" {
			return nil, errors.New("mutual TLS needs the CA that signs the peers' certificates")
		}
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

// secretCreds presents the secret on every call.
type secretCreds struct {
	secret string
	tls    bool
}

func (c secretCreds) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{secretKey: c.secret}, nil
}

func (c secretCreds) RequireTransportSecurity() bool { return c.tls }

// dialOptions are the gRPC options this side dials its peers with.
func (s Security) dialOptions(cfg *tls.Config) []grpc.DialOption {
	var opts []grpc.DialOption
	if cfg != nil {
		opts = append(opts, grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
	} else {
		opts = append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))
	}
	if len(s.Secret) > 0 {
		opts = append(opts, grpc.WithPerRPCCredentials(secretCreds{secret: string(s.Secret), tls: cfg != nil}))
	}
	return opts
}

// serverOptions are the gRPC options of this side's server: TLS, and the
// interceptors that check the secret (telling refused calls to refused)
// and answer the unary calls of proto.actor's service, which it leaves
// unimplemented with a panic that would end the process.
func (s Security) serverOptions(cfg *tls.Config, refused func(string)) []grpc.ServerOption {
	var opts []grpc.ServerOption
	if cfg != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(cfg)))
	}
	check := func(ctx context.Context) error {
		if len(s.Secret) == 0 {
			return nil
		}
		why := ""
		md, _ := metadata.FromIncomingContext(ctx)
		switch got := md.Get(secretKey); {
		case len(got) == 0:
			why = "no secret"
		case subtle.ConstantTimeCompare([]byte(got[0]), s.Secret) != 1:
			why = "wrong secret"
		default:
			return nil
		}
		from := "an unknown peer"
		if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
			from = p.Addr.String()
		}
		if refused != nil {
			refused(fmt.Sprintf("refused a connection from %s: %s", from, why))
		}
		return status.Error(codes.Unauthenticated, "hgpsim: "+why+" (both sides need the same worker secret)")
	}
	return append(opts,
		grpc.UnaryInterceptor(func(ctx context.Context, _ any, _ *grpc.UnaryServerInfo, _ grpc.UnaryHandler) (any, error) {
			if err := check(ctx); err != nil {
				return nil, err
			}
			return nil, status.Error(codes.Unimplemented, "hgpsim: only the message stream is served")
		}),
		grpc.StreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			if err := check(ss.Context()); err != nil {
				return err
			}
			return h(srv, ss)
		}))
}

// remoteOptions are the proto.actor remote options for s.
func (s Security) remoteOptions(refused func(string)) ([]remote.ConfigOption, error) {
	cfg, err := s.tlsConfig()
	if err != nil {
		return nil, err
	}
	return []remote.ConfigOption{
		remote.WithServerOptions(append([]grpc.ServerOption{grpc.MaxRecvMsgSize(maxMessage), grpc.MaxSendMsgSize(maxMessage)},
			s.serverOptions(cfg, refused)...)...),
		remote.WithDialOptions(s.dialOptions(cfg)...),
	}, nil
}

// checkAccepted makes one call to the worker at addr with s, within ctx,
// so that a refused secret or a failed TLS handshake fails the run at
// once, naming the worker, instead of as a silent worker after a timeout.
func (s Security) checkAccepted(ctx context.Context, addr string) error {
	cfg, err := s.tlsConfig()
	if err != nil {
		return err
	}
	conn, err := grpc.DialContext(ctx, addr, s.dialOptions(cfg)...)
	if err != nil {
		return fmt.Errorf("worker %s: %w", addr, err)
	}
	defer conn.Close()
	_, err = remote.NewRemotingClient(conn).ListProcesses(ctx, &remote.ListProcessesRequest{})
	switch code := status.Code(err); {
	case code == codes.OK || code == codes.Unimplemented:
		return nil
	case code == codes.Unauthenticated:
		return fmt.Errorf("worker %s refused this supervisor: %s", addr, status.Convert(err).Message())
	case s.TLS():
		return fmt.Errorf("worker %s: TLS: %s", addr, status.Convert(err).Message())
	case speaksTLS(ctx, addr):
		return fmt.Errorf("worker %s speaks TLS and this supervisor does not: give it the worker's TLS options (--tls-cert, --tls-key and --tls-ca; docs/distributed.md)", addr)
	default:
		// Something else answers there: the setup's own check names it.
		return nil
	}
}

// speaksTLS reports whether a TLS server answers at addr: a handshake
// that completes, or one the server ends with a TLS alert (it asked for a
// client certificate). Nothing is sent past the handshake.
func speaksTLS(ctx context.Context, addr string) bool {
	d := tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}, MinVersion: tls.VersionTLS12}} // a probe: nothing is exchanged past the handshake
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err == nil {
		conn.Close()
		return true
	}
	var alert tls.AlertError
	return errors.As(err, &alert)
}
