package actors

import (
	"strings"
	"testing"
	"time"
)

// A supervisor without TLS that reaches a TLS worker says so, instead of
// "not an hgpsim worker".
func TestPlainSupervisorNamesTLS(t *testing.T) {
	cert, key := testCertificate(t)
	_, addrs := startWorkers(t, 1, securityEnv+"="+strings.Join([]string{"a shared secret of the test", cert, key, cert}, "\n"))
	nw := network(t, testKind, testN)
	rt, err := New(nw, nil, Options{RoundTimeout: 2 * time.Second, Workers: addrs, Scenario: []byte("test")})
	if err == nil {
		rt.Close()
		t.Fatal("a plain supervisor set up a TLS worker")
	}
	if !strings.Contains(err.Error(), "speaks TLS and this supervisor does not") {
		t.Errorf("error %q does not say the worker speaks TLS", err)
	}
}
