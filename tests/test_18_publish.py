"""`seqorch publish` against a collector that misbehaves (docs/
reliability.md, "Publish"): a 200 whose body is cut short is never sent
again, and what is printed of an answer is bounded and never carries the
token, whether the collector echoes it raw or in a header line.  The TLS
test CA and the keys are test_15_provenance's fixtures."""
import http.server
import socket
import ssl
import threading

import pytest

from conftest import seqorch
from lib_provenance import keys, tls  # noqa: F401 (fixtures)

TOKEN = "s3cret-token-0123456789"


class Collector(http.server.BaseHTTPRequestHandler):
    received = []

    def log_message(self, *a):
        pass

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        self.rfile.read(n)
        self.received.append(self.path)
        if self.path == "/cut":
            # Stored, says the status line; then the connection breaks.
            self.send_response(200)
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.wfile.write(b"stored as")
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
            return
        echo = self.headers.get("Authorization", "")
        body = (f"you sent {echo.split()[-1]}; header was "
                f"Authorization: {echo} " + "x" * 4000).encode()
        self.send_response(503 if self.path == "/echo503" else 201)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def collector(tls):  # noqa: F811
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Collector)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(tls / "srv.pem", tls / "srv.key")
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    Collector.received.clear()
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"https://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()


@pytest.fixture
def measured(scratch):
    r = seqorch(scratch, "run", "--study", "sha3", "--hosts", "local",
                "--steps", "300", "--samples", "2", "--variants", "c-fused")
    assert r.returncode == 0, r.stderr
    (scratch / "token").write_text(TOKEN + "\n")
    return scratch


def publish(cwd, url, keys, tls, *extra):  # noqa: F811
    return seqorch(cwd, "publish", "--run", 1, "--url", url, "--sign",
                   keys / "key.pem", "--cacert", tls / "ca.pem",
                   "--token-file", "token", *extra, timeout=120)


def test_a_200_cut_short_is_not_sent_again(measured, keys, tls,  # noqa: F811
                                           collector):
    r = publish(measured, collector + "/cut", keys, tls, "--attempts", 5)
    assert Collector.received == ["/cut"], r.stderr
    assert r.returncode == 0, r.stderr
    assert "answered 200, then the connection ended early" in r.stderr
    assert "not sent again" in r.stderr


@pytest.mark.parametrize("path", ["/echo201", "/echo503"])
def test_an_echoed_token_is_never_printed(measured, keys, tls,  # noqa: F811
                                          collector, path):
    r = publish(measured, collector + path, keys, tls, "--attempts", 2)
    out = r.stdout + r.stderr
    assert TOKEN not in out and TOKEN[:8] not in out, out
    assert "[redacted]" in out
    assert max(len(line) for line in out.splitlines()) < 400
    if path == "/echo201":
        assert r.returncode == 0 and Collector.received == [path]
    else:
        assert r.returncode == 1 and Collector.received == [path, path]
        assert "trying again in 0.5 s" in r.stderr
