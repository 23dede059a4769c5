"""The HTTP guards, over raw HTTP against a real server on loopback: JSON only (415), a bounded body (413), bearer
tokens (401), and CORS off unless origins are configured. A refused request runs nothing and writes nothing."""

import inspect
import json
import socket

import httpx
import pytest
from agui_support import LiveServer, scripted_factory

from strandslike.models import text
from strandslike.protocol.agui import ServerConfigError, create_app

BODY = {"threadId": "t-http", "runId": "r1", "messages": [{"id": "u1", "role": "user", "content": "hi"}]}
TOKEN = "s3cret-Token_for.tests~1"
FIFTY_MB = 50 * 1024 * 1024


class CountingFactory:
    """A scripted factory that counts the agents it builds: a refused request must not build one."""

    def __init__(self) -> None:
        self.built = 0
        self._inner = scripted_factory([text("Hello!")])

    def __call__(self, session_manager):
        self.built += 1
        return self._inner(session_manager)


@pytest.fixture
def factory():
    return CountingFactory()


def assert_nothing_ran(factory: CountingFactory, storage) -> None:
    assert factory.built == 0
    assert list(storage.iterdir()) == []  # no session was created


def assert_refusal(response: httpx.Response, status: int, code: str) -> dict:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["code"] == code
    assert body["message"]
    return body


# -- Content-Type -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("request_options", "shown"),
    [
        ({"content": json.dumps(BODY), "headers": {"content-type": "text/plain"}}, "'text/plain'"),
        ({"content": json.dumps(BODY), "headers": {"content-type": "text/plain;charset=UTF-8"}}, "text/plain"),
        ({"files": {"file": ("body.json", json.dumps(BODY), "application/json")}}, "multipart/form-data"),
        ({"data": {"threadId": "t-http"}}, "application/x-www-form-urlencoded"),
        ({"content": json.dumps(BODY).encode()}, "missing"),
    ],
    ids=["text-plain", "text-plain-charset", "multipart", "form", "none"],
)
async def test_a_run_that_is_not_json_is_refused_with_415(tmp_path, factory, request_options, shown):
    with LiveServer(factory, tmp_path) as server:
        async with httpx.AsyncClient() as client:
            response = await client.post(server.url + "/", **request_options)
    body = assert_refusal(response, 415, "UNSUPPORTED_MEDIA_TYPE")
    assert shown in body["message"]
    assert "application/json" in body["message"]
    assert_nothing_ran(factory, tmp_path)


@pytest.mark.parametrize("content_type", ["application/json", "application/json; charset=utf-8", "Application/JSON"])
async def test_json_runs_with_any_parameters_or_case(tmp_path, factory, content_type):
    with LiveServer(factory, tmp_path) as server:
        async with httpx.AsyncClient() as client:
            response = await client.post(
                server.url + "/", content=json.dumps(BODY), headers={"content-type": content_type}
            )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert '"RUN_FINISHED"' in response.text
    assert factory.built == 1


# -- body limit ---------------------------------------------------------------------------------------------------


def raw_request(url: str, head: str, body: bytes = b"") -> tuple[int, bytes]:
    """Send a request over a plain socket and return the status and the response; the body may be cut short."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(head.encode() + b"\r\n" + body)
        received = b""
        while b"\r\n\r\n" not in received or len(received.partition(b"\r\n\r\n")[2]) == 0:
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
    status = int(received.split(b" ", 2)[1])
    return status, received


def test_a_declared_50_mb_body_is_refused_before_it_is_sent(tmp_path, factory):
    with LiveServer(factory, tmp_path) as server:
        # Only the headers go out: the server must answer from Content-Length alone, without waiting for 50 MB.
        head = (
            "POST / HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
            f"Content-Length: {FIFTY_MB}\r\nConnection: close\r\n"
        )
        status, response = raw_request(server.url, head)
    assert status == 413
    payload = json.loads(response.partition(b"\r\n\r\n")[2])
    assert payload["code"] == "BODY_TOO_LARGE"
    assert str(FIFTY_MB) in payload["message"]
    assert_nothing_ran(factory, tmp_path)


def test_a_streamed_body_is_refused_as_soon_as_it_passes_the_limit(tmp_path, factory):
    """No Content-Length (chunked): the server counts while reading and answers 413 once the limit is passed,
    without waiting for the rest (the client sends 11 MiB of a body that never ends)."""
    mebibyte = b" " * (1024 * 1024)
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(mebibyte), mebibyte) for _ in range(11))
    head = "POST / HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
    with LiveServer(factory, tmp_path) as server:
        status, response = raw_request(server.url, head, chunks)
    assert status == 413
    assert json.loads(response.partition(b"\r\n\r\n")[2])["code"] == "BODY_TOO_LARGE"
    assert_nothing_ran(factory, tmp_path)


async def test_a_50_mb_body_from_httpx_is_refused_and_nothing_is_persisted(tmp_path, factory):
    body = b'{"threadId": "t-big", "runId": "r", "messages": [], "state": "' + b"x" * FIFTY_MB + b'"}'
    with LiveServer(factory, tmp_path) as server:
        async with httpx.AsyncClient(timeout=60) as client:
            try:
                response = await client.post(
                    server.url + "/", content=body, headers={"content-type": "application/json"}
                )
            except httpx.TransportError:
                response = None  # the server answered and closed while the client was still writing
    if response is not None:
        assert_refusal(response, 413, "BODY_TOO_LARGE")
    assert_nothing_ran(factory, tmp_path)


async def test_the_body_limit_is_configurable(tmp_path, factory):
    small = json.dumps(BODY).encode()
    large = json.dumps({**BODY, "messages": [{"id": "u1", "role": "user", "content": "x" * 2000}]}).encode()
    with LiveServer(factory, tmp_path, max_body_bytes=1000) as server:
        async with httpx.AsyncClient() as client:
            headers = {"content-type": "application/json"}
            refused = await client.post(server.url + "/", content=large, headers=headers)
            accepted = await client.post(server.url + "/", content=small, headers=headers)
    assert "1000 bytes" in assert_refusal(refused, 413, "BODY_TOO_LARGE")["message"]
    assert accepted.status_code == 200
    assert factory.built == 1


def test_the_default_limit_is_ten_megabytes():
    assert inspect.signature(create_app).parameters["max_body_bytes"].default == 10 * 1024 * 1024


async def test_a_content_length_that_is_not_a_number_is_refused(tmp_path, factory):
    with LiveServer(factory, tmp_path) as server:
        head = "POST / HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: lots\r\n"
        status, _ = raw_request(server.url, head)
    assert status == 400  # uvicorn's HTTP parser refuses it before the app sees it
    assert_nothing_ran(factory, tmp_path)


# -- bearer token -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("authorization", "invalid_token"),
    [
        (None, False),
        ("Bearer wrong-token", True),
        (f"Bearer {TOKEN}x", True),
        (f"Bearer {TOKEN[:-1]}", True),
        (f"Basic {TOKEN}", True),
        ("Bearer", True),
        (TOKEN, True),
    ],
    ids=["missing", "wrong", "longer", "shorter", "basic", "empty", "no-scheme"],
)
async def test_a_request_without_the_right_token_is_refused_with_401(tmp_path, factory, authorization, invalid_token):
    headers = {"content-type": "application/json"}
    if authorization is not None:
        headers["authorization"] = authorization
    with LiveServer(factory, tmp_path, token=TOKEN) as server:
        async with httpx.AsyncClient() as client:
            run = await client.post(server.url + "/", content=json.dumps(BODY), headers=headers)
            capabilities = await client.get(server.url + "/capabilities", headers=headers)
    for response in (run, capabilities):
        assert_refusal(response, 401, "UNAUTHORIZED")
        challenge = response.headers["www-authenticate"]
        assert challenge.startswith("Bearer ")
        assert ('error="invalid_token"' in challenge) is invalid_token
        assert TOKEN not in response.text
    assert_nothing_ran(factory, tmp_path)


async def test_the_right_token_runs(tmp_path, factory):
    headers = {"content-type": "application/json", "authorization": f"Bearer {TOKEN}"}
    with LiveServer(factory, tmp_path, token=TOKEN) as server:
        async with httpx.AsyncClient() as client:
            run = await client.post(server.url + "/", content=json.dumps(BODY), headers=headers)
            capabilities = await client.get(server.url + "/capabilities", headers={"authorization": f"bearer {TOKEN}"})
    assert run.status_code == 200
    assert '"RUN_FINISHED"' in run.text
    assert capabilities.status_code == 200
    assert factory.built == 1


async def test_authentication_comes_before_the_other_checks(tmp_path, factory):
    # An unauthenticated client learns nothing about the body rules and has nothing read.
    with LiveServer(factory, tmp_path, token=TOKEN, max_body_bytes=10) as server:
        async with httpx.AsyncClient() as client:
            response = await client.post(server.url + "/", content=b"x" * 100, headers={"content-type": "text/plain"})
    assert_refusal(response, 401, "UNAUTHORIZED")


# -- CORS ---------------------------------------------------------------------------------------------------------


PREFLIGHT = {
    "origin": "https://app.example.com",
    "access-control-request-method": "POST",
    "access-control-request-headers": "content-type, authorization",
}


async def test_cors_is_off_unless_origins_are_configured(tmp_path, factory):
    with LiveServer(factory, tmp_path) as server:
        async with httpx.AsyncClient() as client:
            preflight = await client.options(server.url + "/", headers=PREFLIGHT)
            simple = await client.post(
                server.url + "/",
                content=json.dumps(BODY),
                headers={"content-type": "application/json", "origin": "https://app.example.com"},
            )
    assert preflight.status_code == 405
    assert not any(name.startswith("access-control-") for name in preflight.headers)
    assert not any(name.startswith("access-control-") for name in simple.headers)


async def test_configured_origins_pass_the_preflight_and_others_do_not(tmp_path, factory):
    origins = ["https://app.example.com", "http://localhost:3000"]
    with LiveServer(factory, tmp_path, cors_origins=origins, token=TOKEN) as server:
        async with httpx.AsyncClient() as client:
            allowed = await client.options(server.url + "/", headers=PREFLIGHT)
            other = await client.options(server.url + "/", headers={**PREFLIGHT, "origin": "https://evil.example"})
            run = await client.post(
                server.url + "/",
                content=json.dumps(BODY),
                headers={
                    "content-type": "application/json",
                    "origin": "https://app.example.com",
                    "authorization": f"Bearer {TOKEN}",
                },
            )
            unauthenticated = await client.post(
                server.url + "/",
                content=json.dumps(BODY),
                headers={"content-type": "application/json", "origin": "https://app.example.com"},
            )
    # The preflight carries no token, and passes for a configured origin.
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == "https://app.example.com"
    allowed_headers = allowed.headers["access-control-allow-headers"].lower()
    assert "authorization" in allowed_headers
    assert "content-type" in allowed_headers
    assert "POST" in allowed.headers["access-control-allow-methods"]
    assert "access-control-allow-credentials" not in allowed.headers
    assert other.status_code == 400
    assert "access-control-allow-origin" not in other.headers
    assert run.status_code == 200
    assert run.headers["access-control-allow-origin"] == "https://app.example.com"
    # A refusal still carries the CORS headers, so the page can read why it was refused.
    assert_refusal(unauthenticated, 401, "UNAUTHORIZED")
    assert unauthenticated.headers["access-control-allow-origin"] == "https://app.example.com"


# -- options ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [
        {"token": ""},
        {"token": "has space"},
        {"token": "line\nbreak"},
        {"token": 12345},
        {"cors_origins": "https://app.example.com"},
        {"cors_origins": ["https://app.example.com/"]},
        {"cors_origins": ["app.example.com"]},
        {"cors_origins": ["null"]},
        {"cors_origins": [None]},
        {"max_body_bytes": 0},
        {"max_body_bytes": -1},
        {"max_body_bytes": True},
        {"max_body_bytes": "10"},
    ],
)
def test_unusable_options_are_refused_when_the_app_is_created(tmp_path, factory, options):
    with pytest.raises(ServerConfigError) as raised:
        create_app(factory, storage_dir=tmp_path, **options)
    assert isinstance(raised.value, ValueError)
    if "token" in options and isinstance(options["token"], str) and options["token"]:
        assert options["token"] not in str(raised.value)  # a secret is never echoed
