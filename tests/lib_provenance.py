"""Keys and TLS material that the provenance tests share (test_15's
bundles, test_18's collector): Ed25519 signing keys and a test CA with a
server certificate for 127.0.0.1, all made by OpenSSL's own command line."""
import subprocess

import pytest


def openssl(*args, **kw):
    return subprocess.run(["openssl", *map(str, args)], check=True,
                          capture_output=True, **kw)


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    d = tmp_path_factory.mktemp("keys")
    for name in ("key", "other"):
        openssl("genpkey", "-algorithm", "ed25519", "-out", d / f"{name}.pem")
        openssl("pkey", "-in", d / f"{name}.pem", "-pubout", "-out",
                d / f"{name}.pub")
    return d


@pytest.fixture(scope="module")
def tls(tmp_path_factory):
    d = tmp_path_factory.mktemp("tls")
    openssl("req", "-x509", "-newkey", "ed25519", "-nodes", "-days", "2",
            "-subj", "/CN=seqorch test CA", "-keyout", d / "ca.key",
            "-out", d / "ca.pem")
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
            "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", d / "srv.key",
            "-out", d / "srv.csr")
    (d / "ext").write_text("subjectAltName=IP:127.0.0.1\n")
    openssl("x509", "-req", "-in", d / "srv.csr", "-CA", d / "ca.pem",
            "-CAkey", d / "ca.key", "-CAcreateserial", "-days", "2",
            "-extfile", d / "ext", "-out", d / "srv.pem")
    return d

