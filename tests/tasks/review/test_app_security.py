"""The review app's web safety over real HTTP (uvicorn on 127.0.0.1, raw requests through
http.client so that Host, Origin and the body are exactly what an attacker would send): one test
per refusal, the security headers, the token's way from the address into a cookie, sign-in and
sign-out, the slow-down of repeated bad tokens, and `review serve` refusing to listen beyond
loopback without `--allowed-host` (the real CLI in a subprocess)."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from benchfoundry.decisions.store import ReviewStore
from benchfoundry.tasks.review.app import create_app
from benchfoundry.tasks.review.app.access import Throttle
from benchfoundry.tasks.review.app.security import CSP

BIN = Path(sys.executable).parent
TOKEN = "chief-token-for-the-review-tests-0123456789"  # the admin of the conftest's users
DECISION = {"question_id": "q0", "reviewer": "ann", "decision": "accept"}


class Reply:
    def __init__(self, response: http.client.HTTPResponse) -> None:
        self.status = response.status
        self.headers = response.headers
        self.raw = response.read()

    def json(self) -> dict:
        assert self.headers.get("content-type", "").startswith("application/json"), self.raw
        return json.loads(self.raw)

    def cookies(self) -> list[str]:
        return self.headers.get_all("set-cookie") or []


def send(
    url: str,
    method: str = "GET",
    path: str = "/",
    body: bytes | Iterable[bytes] | object | None = None,
    headers: dict[str, str] | None = None,
    json_body: bool = True,
    as_user: str | None = None,
) -> Reply:
    """One request as given (no redirect followed, no header added but Host, length and, with
    `as_user`, that user's token)."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=20)
    chunked = body is not None and not isinstance(body, bytes | dict | list)
    data = json.dumps(body).encode() if isinstance(body, dict | list) else body
    given = dict(headers or {})
    if as_user:
        given["Authorization"] = f"Bearer {user_token(as_user)}"
    if json_body and body is not None:
        given.setdefault("Content-Type", "application/json")
    try:
        connection.request(method, path, data, given, encode_chunked=chunked)
        return Reply(connection.getresponse())
    finally:
        connection.close()


@pytest.fixture
def open_app(run, serve_app):
    return run, serve_app(create_app(run.root))


@pytest.fixture
def token_app(run, serve_app):
    return run, serve_app(create_app(run.root))


def user_token(name: str) -> str:
    return f"{name}-token-for-the-review-tests-0123456789"  # as the conftest's users


def bearer(token: str = TOKEN) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_a_state_change_that_is_not_json_gets_415(open_app):
    run, url = open_app
    for kind in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data"):
        reply = send(
            url, "POST", "/api/reviews", json.dumps(DECISION).encode(), {"Content-Type": kind}
        )
        assert reply.status == 415 and "application/json" in reply.json()["error"], kind
    reply = send(
        url, "POST", "/api/reviews", json.dumps(DECISION).encode(), json_body=False, as_user="ann"
    )
    assert reply.status == 415
    assert ReviewStore.open(run).count() == 0
    ok = send(
        url,
        "POST",
        "/api/reviews",
        DECISION,
        {"Content-Type": "application/json; charset=utf-8"},
        as_user="ann",
    )
    assert ok.status == 201 and ReviewStore.open(run).count() == 1


def test_a_state_change_from_a_foreign_origin_gets_403(open_app):
    run, url = open_app
    for origin in ("http://evil.example", "null", f"https://{urlsplit(url).netloc}"):
        reply = send(url, "POST", "/api/reviews", DECISION, {"Origin": origin}, as_user="ann")
        assert reply.status == 403 and "may not change" in reply.json()["error"], origin
    # The attack as found: a text/plain "simple request" from another site.
    attack = send(url, "POST", "/api/reviews", json.dumps(DECISION).encode(),
                  {"Content-Type": "text/plain", "Origin": "http://evil.example"})  # fmt: skip
    assert attack.status in (403, 415)
    assert ReviewStore.open(run).count() == 0
    same = send(url, "POST", "/api/reviews", DECISION, {"Origin": url}, as_user="ann")
    assert same.status == 201


def test_a_cross_site_fetch_gets_403(open_app):
    run, url = open_app
    for site in ("cross-site", "same-site"):
        reply = send(url, "POST", "/api/reviews", DECISION, {"Sec-Fetch-Site": site}, as_user="ann")
        assert reply.status == 403 and site in reply.json()["error"]
    assert ReviewStore.open(run).count() == 0
    assert (
        send(
            url, "POST", "/api/reviews", DECISION, {"Sec-Fetch-Site": "same-origin"}, as_user="ann"
        ).status
        == 201
    )


def test_a_foreign_host_gets_421_and_allowed_hosts_are_served(run, serve_app):
    url = serve_app(create_app(run.root))
    port = urlsplit(url).port
    refused = send(url, "GET", "/api/batches", headers={"Host": f"evil.example:{port}"})
    assert refused.status == 421 and "--allowed-host" in refused.json()["error"]
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}", "LOCALHOST"):
        assert (
            send(url, "GET", "/api/batches", headers={"Host": host}, as_user="ann").status == 200
        ), host
    allowing = serve_app(
        create_app(run.root, allowed_hosts=["review.example.org", "b.example:8443"])
    )
    assert (
        send(
            allowing, "GET", "/api/batches", headers={"Host": "review.example.org"}, as_user="ann"
        ).status
        == 200
    )
    assert (
        send(
            allowing, "GET", "/api/batches", headers={"Host": "b.example:8443"}, as_user="ann"
        ).status
        == 200
    )
    assert send(allowing, "GET", "/api/batches", headers={"Host": "b.example:9999"}).status == 421
    assert send(allowing, "GET", "/api/batches", headers={"Host": "evil.example"}).status == 421
    # HTTP/1.0 without a Host header at all.
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        raw.sendall(b"GET /api/batches HTTP/1.0\r\n\r\n")
        answer = b"".join(iter(lambda: raw.recv(65536), b""))
    assert answer.startswith(b"HTTP/1.1 400") and b"no Host header" in answer


def test_a_body_over_1_mib_gets_413_by_length_and_when_streamed(open_app):
    run, url = open_app
    big = json.dumps({**DECISION, "note": "x" * (1 << 20)}).encode()
    reply = send(url, "POST", "/api/reviews", big, as_user="ann")
    assert reply.status == 413 and "at most 1048576 bytes" in reply.json()["error"]
    streamed = send(
        url,
        "POST",
        "/api/reviews",
        (big[i : i + 65536] for i in range(0, len(big), 65536)),
        as_user="ann",
    )
    assert streamed.status == 413
    assert ReviewStore.open(run).count() == 0
    small = json.dumps({**DECISION, "note": "fine"}).encode()
    assert (
        send(url, "POST", "/api/reviews", iter([small[:10], small[10:]]), as_user="ann").status
        == 201
    )


def test_every_response_carries_the_csp_and_security_headers(run, serve_app):
    url = serve_app(create_app(run.root))
    replies = [
        send(url, "GET", "/api/batches", headers=bearer()),
        send(url, "GET", "/", headers=bearer()),
        send(url, "GET", "/signin"),
        send(url, "GET", "/static/review.js"),
        send(url, "GET", "/api/batches"),  # 401
        send(url, "GET", "/nope", headers=bearer()),  # 404
        send(url, "GET", "/", headers={"Host": "evil.example"}),  # 421
        send(url, "POST", "/api/reviews", b"x", {"Content-Type": "text/plain"}),  # 415
    ]
    assert [r.status for r in replies] == [200, 200, 200, 200, 401, 404, 421, 415]
    for reply in replies:
        assert reply.headers["content-security-policy"] == CSP
        assert reply.headers["x-content-type-options"] == "nosniff"
        assert reply.headers["referrer-policy"] == "no-referrer"
    assert "'unsafe-inline'" not in CSP and "script-src 'self';" in CSP


def test_pages_keep_no_inline_script_style_or_handler():
    import re

    folder = Path(__file__).parents[3] / "tasks" / "review" / "app" / "templates"
    for template in folder.glob("*.html"):
        text = template.read_text()
        assert not re.search(r"<script(?![^>]*\bsrc=)", text), template.name
        assert not re.search(r"<style|\sstyle=|\son[a-z]+=", text, re.IGNORECASE), template.name


def test_a_token_in_the_address_becomes_a_cookie_and_leaves_the_address(token_app):
    run, url = token_app
    moved = send(url, "GET", f"/conflicts?keep=1&token={TOKEN}")
    assert moved.status == 303 and moved.headers["location"] == "/conflicts?keep=1"
    (cookie,) = moved.cookies()
    assert cookie.startswith(f"review_token={TOKEN};")
    flags = {f.strip().lower() for f in cookie.split(";")[1:]}
    assert {"httponly", "samesite=strict", "path=/"} <= flags and "secure" not in flags
    page = send(url, "GET", "/conflicts?keep=1", headers={"Cookie": f"review_token={TOKEN}"})
    assert (
        page.status == 200 and "adjudicator" in page.raw.decode() and TOKEN not in page.raw.decode()
    )
    # A path that would read as another host in Location stays on this one.
    assert (
        send(url, "GET", f"//evil.example/?token={TOKEN}").headers["location"] == "/evil.example/"
    )
    assert send(url, "GET", "/?token=wrong").status == 401
    # Without a principal: a page goes to sign-in, the API answers 401.
    assert send(url, "GET", "/").headers["location"] == "/signin"
    assert send(url, "GET", "/api/batches").status == 401
    stale = send(url, "GET", "/", headers={"Cookie": "review_token=old"})
    assert stale.status == 303 and stale.headers["location"] == "/signin"
    assert any(
        c.startswith('review_token="";') or "max-age=0" in c.lower() for c in stale.cookies()
    )


def test_the_cookie_is_secure_when_served_over_https(token_app):
    # uvicorn believes X-Forwarded-Proto from 127.0.0.1: a TLS proxy on this machine.
    run, url = token_app
    moved = send(url, "GET", f"/?token={TOKEN}", headers={"X-Forwarded-Proto": "https"})
    (cookie,) = moved.cookies()
    assert "secure" in {f.strip().lower() for f in cookie.split(";")}
    signed = send(url, "POST", "/api/signin", {"token": TOKEN},
                  {"X-Forwarded-Proto": "https", "Origin": f"https://{urlsplit(url).netloc}"})  # fmt: skip
    assert signed.status == 200 and "secure" in signed.cookies()[0].lower()


def test_sign_in_and_out_through_the_json_api(token_app):
    run, url = token_app
    page = send(url, "GET", "/signin")
    text = page.raw.decode()
    assert (
        page.status == 200 and 'id="signin"' in text and '<script src="/static/session.js"' in text
    )
    assert send(url, "POST", "/api/signin", {"token": "wrong"}).status == 401
    assert send(url, "POST", "/api/signin", {"nothing": 1}).status == 400
    signed = send(url, "POST", "/api/signin", {"token": TOKEN}, {"Origin": url})
    assert signed.status == 200 and signed.json() == {"name": "chief", "role": "admin"}
    (cookie,) = signed.cookies()
    assert cookie.startswith(f"review_token={TOKEN};") and "httponly" in cookie.lower()
    held = {"Cookie": f"review_token={TOKEN}"}
    assert send(url, "GET", "/api/whoami", headers=held).json() == {
        "name": "chief",
        "role": "admin",
    }
    out = send(url, "POST", "/api/signout", {}, {**held, "Origin": url})
    assert out.status == 200 and "max-age=0" in out.cookies()[0].lower()
    assert send(url, "POST", "/api/signout", {}, {"Origin": "http://evil.example"}).status == 403


def test_every_request_needs_a_users_own_token_and_a_revoked_one_gets_401(open_app):
    run, url = open_app
    assert send(url, "GET", "/api/whoami", as_user=None).status == 401
    assert send(url, "GET", "/", as_user=None).headers["location"].startswith("/signin")
    assert send(url, "GET", "/signin", as_user=None).status == 200
    assert send(url, "GET", "/api/whoami", as_user="ann").json() == {
        "name": "ann",
        "role": "annotator",
    }
    assert send(url, "GET", "/api/whoami", as_user="lead").json()["role"] == "adjudicator"
    ReviewStore.open(run).revoke("bo")
    assert send(url, "GET", "/api/whoami", as_user="bo").status == 401
    body = {"question_id": "q0", "decision": "accept"}
    assert send(url, "POST", "/api/reviews", body, as_user="bo").status == 401
    assert ReviewStore.open(run).count() == 0


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_repeated_bad_tokens_are_slowed_down_then_refused_with_429(run, serve_app):
    clock = Clock()
    throttle = Throttle(
        max_failures=3, window_s=60, base_delay_s=0.01, max_delay_s=0.04, clock=clock
    )
    url = serve_app(create_app(run.root, throttle=throttle))
    for _ in range(3):
        assert send(url, "GET", "/api/batches", headers=bearer("guess")).status == 401
    locked = send(url, "GET", "/api/batches", headers=bearer())  # even the right one, while locked
    assert locked.status == 429 and locked.headers["retry-after"] == "60"
    assert "too many bad tokens" in locked.json()["error"]
    # a sign-in link opened by a browser meanwhile gets a page that says to wait
    page = send(url, "GET", f"/?token={TOKEN}", headers={"Accept": "text/html,*/*;q=0.8"})
    assert page.status == 429 and page.headers["retry-after"] == "60"
    assert page.headers["content-type"].startswith("text/html")
    assert b"<h1>Too many sign-in attempts</h1>" in page.raw and b"Wait a minute" in page.raw
    assert send(url, "POST", "/api/signin", {"token": TOKEN}).status == 429
    assert throttle.failures("127.0.0.1") == 6 and throttle.delay("127.0.0.1") == 0.04
    clock.now += 61  # the failures age out of the window
    assert send(url, "GET", "/api/batches", headers=bearer()).status == 200
    assert throttle.failures("127.0.0.1") == 0
    # A good token forgets earlier failures.
    for _ in range(2):
        send(url, "GET", "/api/batches", headers=bearer("guess"))
    assert send(url, "POST", "/api/signin", {"token": TOKEN}).status == 200
    assert throttle.failures("127.0.0.1") == 0


def test_the_throttle_counts_per_address_grows_its_delay_and_forgets():
    clock = Clock()
    throttle = Throttle(max_failures=2, window_s=10, base_delay_s=1, max_delay_s=4, clock=clock)
    assert not throttle.locked("a") and throttle.delay("a") == 0
    throttle.fail("a")
    assert throttle.delay("a") == 0 and not throttle.locked("a")
    delays = []
    for _ in range(5):
        throttle.fail("a")
        delays.append(throttle.delay("a"))
    assert delays == [1, 2, 4, 4, 4] and throttle.locked("a")
    assert not throttle.locked("b")  # per address
    clock.now += 5
    throttle.fail("a")
    clock.now += 5.5  # the first six age out; the one made 5.5 s ago stays
    assert throttle.failures("a") == 1 and not throttle.locked("a")
    throttle.succeed("a")
    assert throttle.failures("a") == 0
    with pytest.raises(ValueError):
        Throttle(max_failures=0)
    small = Throttle(max_clients=3, clock=clock)
    for name in "wxyz":
        small.fail(name)
        clock.now += 1
    assert small.failures("w") == 0 and small.failures("z") == 1  # the oldest was dropped


def test_html_in_notes_and_reasons_is_stored_as_text_and_shown_escaped(bo_cross_checks, open_app):
    run, url = open_app
    note = '<img src=x onerror="alert(1)"> & <b>bold</b>'
    made = [
        {**DECISION, "question_id": "q1", "note": note},
        {"question_id": "q1", "reviewer": "bo", "decision": "reject", "reason": "<script>x</script>", "note": note},
    ]  # fmt: skip
    for body in made:
        assert send(url, "POST", "/api/reviews", body, as_user=body["reviewer"]).status == 201
    stored = {r.reviewer: r for r in ReviewStore.open(run).records()}
    assert stored["ann"].note == note and stored["bo"].reason == "<script>x</script>"
    batch = send(url, "GET", "/api/batches", as_user="ann").json()["batches"][0]["batch_id"]
    page = send(url, "GET", f"/batches/{batch}", as_user="ann").raw.decode()
    escaped = "&lt;img src=x onerror=&#34;alert(1)&#34;&gt; &amp; &lt;b&gt;bold&lt;/b&gt;"
    assert f'<p class="note">note: {escaped}</p>' in page and "<img src=x" not in page
    conflicts = send(url, "GET", "/conflicts", as_user="lead").raw.decode()
    assert escaped in conflicts and "&lt;script&gt;x&lt;/script&gt;" in conflicts
    assert "<script>x" not in conflicts and "<b>bold" not in conflicts


def _serve_cli(args: list[str], cwd: Path) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != "BENCHFOUNDRY_REVIEW_TOKEN"}
    return subprocess.Popen(
        [str(BIN / "benchfoundry"), "review", "serve", *args],
        cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, env=env,
    )  # fmt: skip


def _started(server: subprocess.Popen, url: str, headers: dict[str, str]) -> Reply:
    deadline = time.monotonic() + 60
    while True:
        try:
            return send(url, "GET", "/api/batches", headers=headers)
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(server.stderr.read().decode()) from None
            time.sleep(0.3)


def test_serving_beyond_loopback_needs_allowed_host(run, tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base = ["--out", str(run.root), "--port", str(port), "--host", "0.0.0.0"]
    refused = _serve_cli(base, tmp_path)
    _, err = refused.communicate(timeout=120)
    assert refused.returncode == 1 and "--allowed-host NAME" in err.decode(), err.decode()
    assert "Traceback" not in err.decode()
    server = _serve_cli(base + ["--allowed-host", "review.example.org"], tmp_path)
    url = f"http://127.0.0.1:{port}"
    chief = user_token("chief")
    public = {"Host": "review.example.org", **bearer(chief)}
    try:
        ready = _started(server, url, public)
        assert ready.status == 200 and ready.json()["batches"]
        assert (
            send(url, "GET", "/api/batches", headers={**public, "Host": "evil.example"}).status
            == 421
        )
        moved = send(url, "GET", f"/?token={chief}", headers={"Host": "review.example.org"})
        assert moved.status == 303 and chief not in moved.headers["location"]
        assert (
            send(url, "GET", "/?token=wrong", headers={"Host": "review.example.org"}).status == 401
        )
    finally:
        server.terminate()
        _, err = server.communicate(timeout=20)
    assert chief not in err.decode() and "wrong" not in err.decode()  # no request line logged


def test_with_no_users_serve_makes_an_admin_and_prints_a_one_time_sign_in_address(run, tmp_path):
    store = ReviewStore.open(run)
    for user in store.users():
        store.revoke(user.name)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = _serve_cli(["--out", str(run.root), "--port", str(port)], tmp_path)
    url = f"http://127.0.0.1:{port}"
    try:
        assert _started(server, url, {}).status == 401
        line = b""
        while b"?token=" not in line:
            line = server.stderr.readline()
            assert line, "no sign-in address printed"
        address = line.decode().strip()
        assert address.startswith(f"{url}/?token=")
        moved = send(url, "GET", address.removeprefix(url), as_user=None)
        assert moved.status == 303 and "token" not in moved.headers["location"]
        cookie = moved.cookies()[0].split(";")[0]
        me = send(url, "GET", "/api/whoami", headers={"Cookie": cookie})
        assert me.json() == {"name": "admin", "role": "admin"}
    finally:
        server.terminate()
        server.communicate(timeout=20)
    assert [u.name for u in store.users() if u.active] == ["admin"]


def test_host_names_and_bind_addresses_are_read_strictly():
    from benchfoundry.tasks.review.app.security import check_allowed_host, is_loopback, split_host

    assert split_host("[::1]:8765") == ("::1", 8765) and split_host("::1") == ("::1", None)
    assert split_host("Review.Example.org.") == ("review.example.org", None)
    with pytest.raises(ValueError, match="not a number"):
        split_host("example.org:http")
    for bad in ("http://review.example.org/", "a b", "", "user@host"):
        with pytest.raises(ValueError, match="--allowed-host takes a host name"):
            check_allowed_host(bad)
    assert all(map(is_loopback, ("127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost")))
    assert not any(map(is_loopback, ("0.0.0.0", "::", "192.168.1.4", "review.example.org")))
