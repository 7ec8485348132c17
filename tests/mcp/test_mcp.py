"""`lantern mcp` driven as agents drive it: the official Python MCP SDK as the client, over
stdio and over streamable HTTP, against the demo bundle (and the Rust book's, when built).

Run by tests/run.sh after the demo site is built:
    tests/mcp/.venv/bin/python -m unittest discover -s tests/mcp -v
Environment: LANTERN_BIN (default target/release/lantern), LANTERN_MCP_BUNDLE (default
out/site.lantern), LANTERN_RUST_BOOK_BUNDLE (optional: the Rust book checks run only with it).
"""

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

ROOT = Path(__file__).resolve().parents[2]
LANTERN = os.environ.get("LANTERN_BIN", str(ROOT / "target/release/lantern"))
BUNDLE = os.environ.get("LANTERN_MCP_BUNDLE", str(ROOT / "out/site.lantern"))
RUST_BOOK = os.environ.get("LANTERN_RUST_BOOK_BUNDLE")
DOCS_PAGES = len(list((ROOT / "site/docs").rglob("*.md")))


def run(coro):
    return asyncio.run(coro)


async def over_stdio(bundle, body, *args):
    """Starts `lantern mcp BUNDLE ARGS` as a child process and runs `body(session)`."""
    params = StdioServerParameters(
        command=LANTERN, args=["mcp", bundle, *args], cwd=str(ROOT)
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            return await body(session)


async def over_http(url, body):
    async with streamable_http_client(url) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            return await body(session)


def structured(result):
    """A successful call's structured result."""
    assert not result.is_error, text_of(result)
    assert result.structured_content is not None
    return result.structured_content


def text_of(result):
    return " ".join(getattr(c, "text", "") for c in result.content)


class Process:
    """A child process whose stderr (or stdout) is read until a line matches; killed on exit."""

    def __init__(self, args, pattern, stream="stderr"):
        pipes = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        pipes[stream] = subprocess.PIPE
        self.proc = subprocess.Popen(args, cwd=ROOT, text=True, **pipes)
        out = getattr(self.proc, stream)
        self.lines = []
        self.match = None
        for line in out:
            self.lines.append(line)
            m = re.search(pattern, line)
            if m:
                self.match = m
                break
        if self.match is None:
            raise AssertionError(f"{args} ended without {pattern!r}: {''.join(self.lines)}")
        # Keep draining so the child never blocks on a full pipe.
        threading.Thread(target=out.read, daemon=True).start()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.proc.kill()
        self.proc.wait()


def serve_folder(folder):
    """`lantern serve` on a free port; yields the base URL."""
    p = subprocess.Popen(
        [LANTERN, "serve", str(folder), "--addr", "127.0.0.1:0"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    line = p.stdout.readline()
    m = re.search(r"(http://127\.0\.0\.1:\d+)/", line)
    assert m, f"lantern serve said {line!r}"
    return p, m.group(1)


class FakeUpstreamLLM(BaseHTTPRequestHandler):
    """A test double for the remote LLM (the one part that cannot run here): answers every
    chat-completions request with one cited sentence, streamed as OpenAI does."""

    def do_POST(self):
        length = int(self.headers.get("content-length", 0))
        self.rfile.read(length)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        for piece in ["Search keeps working offline ", "once the site was visited [1]."]:
            chunk = {"choices": [{"delta": {"content": piece}}]}
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")

    def log_message(self, *args):
        pass


class Filters(unittest.TestCase):
    """A built site with filters (tests/corpus/built-site): listed, applied, checked."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.bundle = os.path.join(cls.tmp.name, "built.lantern")
        subprocess.run(
            [LANTERN, "build", str(ROOT / "tests/corpus/built-site"), "--out", cls.bundle, "--quiet"],
            cwd=str(ROOT), check=True, capture_output=True,
        )

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_status_lists_the_filters_and_search_applies_them(self):
        async def body(s):
            status = structured(await s.call_tool("corpus_status", {}))
            q = "how do I export a chart as an image"
            everything = structured(await s.call_tool("search_docs", {"query": q, "k": 10}))
            v1 = structured(
                await s.call_tool("search_docs", {"query": q, "k": 10, "filters": {"version": ["1"]}})
            )
            typo = await s.call_tool("search_docs", {"query": q, "filters": {"verison": ["1"]}})
            wrong_type = await s.call_tool("search_docs", {"query": q, "filters": {"version": 1}})
            return status, everything, v1, typo, wrong_type

        status, everything, v1, typo, wrong_type = run(over_stdio(self.bundle, body))
        self.assertEqual(status["filters"], {"version": ["2", "1"]})
        self.assertTrue(any("/v2/" in h["url"] for h in everything["hits"]))
        self.assertTrue(v1["hits"])
        self.assertTrue(all("/v1/" in h["url"] for h in v1["hits"]), v1["hits"])
        self.assertTrue(typo.is_error)
        self.assertIn('unknown filter "verison" (known: version)', text_of(typo))
        self.assertTrue(wrong_type.is_error)


class OverStdio(unittest.TestCase):
    def test_tools_are_listed_with_typed_schemas(self):
        async def body(s):
            return (await s.list_tools()).tools

        tools = {t.name: t for t in run(over_stdio(BUNDLE, body))}
        self.assertEqual(set(tools), {"search_docs", "get_section", "corpus_status"})
        search = tools["search_docs"]
        self.assertEqual(search.input_schema["type"], "object")
        self.assertIn("query", search.input_schema["required"])
        self.assertEqual(search.input_schema["properties"]["query"]["type"], "string")
        for name in tools:
            self.assertIsNotNone(tools[name].output_schema, name)
            self.assertTrue(tools[name].description, name)
        self.assertIn("hits", search.output_schema["properties"])
        self.assertIn("text", tools["get_section"].output_schema["properties"])

    def test_search_then_read_the_section_whole(self):
        async def body(s):
            found = structured(
                await s.call_tool("search_docs", {"query": "Does search work offline?", "k": 3})
            )
            top = found["hits"][0]
            by_id = structured(await s.call_tool("get_section", {"id": top["id"]}))
            by_url = structured(await s.call_tool("get_section", {"url": top["url"]}))
            keyword = structured(
                await s.call_tool("search_docs", {"query": "--no-cache", "mode": "keyword"})
            )
            return found, by_id, by_url, keyword

        found, by_id, by_url, keyword = run(over_stdio(BUNDLE, body))
        self.assertEqual(found["mode"], "hybrid")
        self.assertFalse(found["no_good_match"])
        self.assertLessEqual(len(found["hits"]), 3)
        top = found["hits"][0]
        # The FAQ and the deploying page both answer it.
        self.assertRegex(top["url"], r"^/(faq|deploying)\.html#")
        self.assertIn("offline", top["breadcrumb"].lower())
        self.assertIsNotNone(top["vector_rank"])
        self.assertEqual(by_id, by_url)
        self.assertEqual(by_id["url"], top["url"])
        # The whole section: every word of the excerpt is in it, and it is not shorter.
        for word in re.findall(r"\w{5,}", top["excerpt"])[:10]:
            self.assertIn(word, by_id["text"])
        self.assertGreaterEqual(len(by_id["text"]), len(top["excerpt"].strip("…")) - 2)
        self.assertTrue(by_id["previous"] or by_id["next"], "neighbours on the FAQ page")
        self.assertEqual(keyword["mode"], "keyword")
        self.assertIn("/cli.html", keyword["hits"][0]["url"])
        self.assertIsNone(keyword["hits"][0]["vector_rank"])

    def test_status_describes_the_bundle(self):
        async def body(s):
            return structured(await s.call_tool("corpus_status", {}))

        status = run(over_stdio(BUNDLE, body))
        self.assertEqual(status["pages"], DOCS_PAGES)
        self.assertGreater(status["sections"], status["pages"])
        self.assertEqual(status["source"], BUNDLE)
        self.assertEqual(status["bundle_bytes"], os.path.getsize(BUNDLE))
        self.assertIn("MiniLM", status["model"])
        self.assertFalse(status["answers"])
        self.assertTrue(status["built"])

    def test_fifty_bad_calls_are_tool_errors_and_the_server_keeps_answering(self):
        bad = [
            ("search_docs", {"query": ""}),
            ("search_docs", {"query": "   \n\t "}),
            ("search_docs", {"query": "x" * 5000}),
            ("search_docs", {"query": "ok", "k": 0}),
            ("search_docs", {"query": "ok", "k": 51}),
            ("search_docs", {"query": "ok", "k": -3}),
            ("search_docs", {"query": "ok", "k": "five"}),
            ("search_docs", {"query": "ok", "k": 1.5}),
            ("search_docs", {"query": "ok", "mode": "fuzzy"}),
            ("search_docs", {"query": 123}),
            ("search_docs", {"query": None}),
            ("search_docs", {"query": ["a", "b"]}),
            ("search_docs", {}),
            ("search_docs", {"q": "misspelled argument"}),
            ("get_section", {"id": -1}),
            ("get_section", {"id": 10**9}),
            ("get_section", {"id": 2**70}),
            ("get_section", {"id": "seven"}),
            ("get_section", {"url": "/nope.html#gone"}),
            ("get_section", {"url": "javascript:alert(1)"}),
            ("get_section", {"id": 0, "url": "/index.html"}),
            ("get_section", {}),
            ("search_docs", {"query": "ok", "k": 10**30}),
            ("search_docs", {"query": "\u0000\u0001"}),
            ("get_section", {"url": ""}),
        ] * 2
        self.assertEqual(len(bad), 50)

        async def body(s):
            outcomes = [await s.call_tool(name, args) for name, args in bad]
            after = structured(await s.call_tool("search_docs", {"query": "lantern inspect"}))
            return outcomes, after

        outcomes, after = run(over_stdio(BUNDLE, body))
        for (name, args), r in zip(bad, outcomes):
            self.assertTrue(r.is_error, f"{name} {str(args)[:80]} was not an error")
            self.assertTrue(text_of(r).strip(), f"{name} {str(args)[:80]}: no message")
        messages = " ".join(text_of(r) for r in outcomes)
        for expected in ["query is empty", "k must be from 1 to 50", "no section", "not both"]:
            self.assertIn(expected, messages)
        self.assertIn("/cli.html#lantern-inspect", after["hits"][0]["url"])

    def test_ask_returns_the_verified_answer_through_the_proxy(self):
        upstream = ThreadingHTTPServer(("127.0.0.1", 0), FakeUpstreamLLM)
        threading.Thread(target=upstream.serve_forever, daemon=True).start()
        up = f"http://127.0.0.1:{upstream.server_address[1]}"
        proxy_args = [LANTERN, "proxy", "--upstream", up, "--model", "test-double",
                      "--addr", "127.0.0.1:0", "--bundle", BUNDLE]
        try:
            with Process(proxy_args, r"http://(127\.0\.0\.1:\d+)", "stdout") as proxy:
                url = f"http://{proxy.match.group(1)}"

                async def body(s):
                    names = {t.name for t in (await s.list_tools()).tools}
                    answer = structured(
                        await s.call_tool("ask", {"question": "Does search work offline?"})
                    )
                    empty = await s.call_tool("ask", {"question": " "})
                    return names, answer, empty

                names, answer, empty = run(over_stdio(BUNDLE, body, "--proxy", url))
        finally:
            upstream.shutdown()
        self.assertIn("ask", names)
        outcome = answer["outcome"]
        self.assertEqual(outcome["status"], "answered", outcome)
        self.assertEqual(outcome["cited"], [1])
        self.assertIn("[1]", outcome["text"])
        self.assertTrue(outcome["passages"])
        self.assertTrue(empty.is_error)


class OverHttp(unittest.TestCase):
    def test_the_same_tools_over_streamable_http(self):
        args = [LANTERN, "mcp", BUNDLE, "--http", "127.0.0.1:0"]
        with Process(args, r"(http://127\.0\.0\.1:\d+/mcp)") as server:
            url = server.match.group(1)

            async def body(s):
                names = {t.name for t in (await s.list_tools()).tools}
                found = structured(await s.call_tool("search_docs", {"query": "abstain_cosine"}))
                status = structured(await s.call_tool("corpus_status", {}))
                bad = await s.call_tool("search_docs", {"query": "ok", "k": 99})
                again = structured(await s.call_tool("get_section", {"id": 0}))
                return names, found, status, bad, again

            names, found, status, bad, again = run(over_http(url, body))
        self.assertEqual(names, {"search_docs", "get_section", "corpus_status"})
        self.assertTrue(found["hits"])
        self.assertEqual(status["pages"], DOCS_PAGES)
        self.assertTrue(bad.is_error)
        self.assertTrue(again["text"])


def post_initialize(url, origin=None):
    """One raw `initialize` POST: (status, session id or None)."""
    import urllib.error
    import urllib.request

    body = json.dumps({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "probe", "version": "0"}},
    }).encode()
    headers = {"content-type": "application/json",
               "accept": "application/json, text/event-stream"}
    if origin:
        headers["origin"] = origin
    req = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=30) as res:
            res.read(1)
            return res.status, res.headers.get("mcp-session-id")
    except urllib.error.HTTPError as e:
        return e.code, None


class HttpHardening(unittest.TestCase):
    def test_foreign_origins_floods_and_session_storms_are_refused(self):
        args = [LANTERN, "mcp", BUNDLE, "--http", "127.0.0.1:0"]
        with Process(args, r"(http://127\.0\.0\.1:(\d+)/mcp)") as server:
            url, port = server.match.group(1), server.match.group(2)
            # A page on another site may not drive the server from a reader's browser.
            self.assertEqual(post_initialize(url, "https://evil.example")[0], 403)
            self.assertEqual(post_initialize(url, f"http://localhost:{port}")[0], 200)
            # 200,000 filter values are refused at once, and the server keeps answering.
            flood = {"docs": [f"v{i}" for i in range(200_000)]}

            async def body(s):
                bad = await s.call_tool("search_docs", {"query": "cache", "filters": flood})
                long_key = await s.call_tool(
                    "search_docs", {"query": "cache", "filters": {"k" * 3_000_000: ["v"]}})
                status = structured(await s.call_tool("corpus_status", {}))
                return bad, long_key, status

            bad, long_key, status = run(over_http(url, body))
            self.assertTrue(bad.is_error)
            self.assertIn("limit is 256", text_of(bad))
            self.assertTrue(long_key.is_error)
            self.assertLess(len(text_of(long_key)), 500, "a long key is not echoed whole")
            self.assertEqual(status["pages"], DOCS_PAGES)
            # Sessions are capped: after 1024 open ones, a new one is refused until some close.
            codes = [post_initialize(url)[0] for _ in range(1030)]
            # (Two sessions may be open already: the probe's and the client's.)
            self.assertIn(codes.count(200), range(1022, 1025), codes[-10:])
            self.assertNotEqual(codes[-1], 200)


class RemoteBundle(unittest.TestCase):
    def test_a_deployed_bundle_is_fetched_checked_and_cached(self):
        with tempfile.TemporaryDirectory() as site, tempfile.TemporaryDirectory() as cache:
            data = Path(BUNDLE).read_bytes()
            (Path(site) / "search.lantern").write_bytes(data)
            damaged = bytearray(data)
            damaged[len(damaged) // 2] ^= 0xFF
            (Path(site) / "damaged.lantern").write_bytes(bytes(damaged))
            server, base = serve_folder(site)
            try:
                url = f"{base}/search.lantern"

                async def body(s):
                    status = structured(await s.call_tool("corpus_status", {}))
                    found = structured(await s.call_tool("search_docs", {"query": "lantern inspect"}))
                    return status, found

                status, found = run(over_stdio(url, body, "--cache-dir", cache))
                self.assertEqual(status["source"], url)
                # Credentials in the URL are sent, never shown.
                secret = url.replace("http://", "http://reader:s3cret@")
                status, found = run(over_stdio(secret, body, "--cache-dir", cache, "--refresh"))
                self.assertEqual(status["source"], url)
                self.assertNotIn("s3cret", json.dumps([status, found]))
                self.assertEqual(status["pages"], DOCS_PAGES)
                # Links point at the site the bundle came from.
                self.assertTrue(found["hits"][0]["url"].startswith(base + "/"))
                cached = list(Path(cache).glob("*.lantern"))
                self.assertEqual(len(cached), 1)
                self.assertEqual(cached[0].read_bytes(), data)

                for bad_url, expected in [
                    (f"{base}/damaged.lantern", "not a usable Lantern bundle"),
                    (f"{base}/missing.lantern", "404"),
                    ("http://127.0.0.1:9/search.lantern", "fetching"),
                ]:
                    p = subprocess.run(
                        [LANTERN, "mcp", bad_url, "--cache-dir", cache],
                        cwd=ROOT, capture_output=True, text=True, timeout=60,
                    )
                    self.assertNotEqual(p.returncode, 0, bad_url)
                    self.assertIn(expected, p.stderr, bad_url)
                    self.assertNotIn("panicked", p.stderr)
            finally:
                server.kill()
                server.wait()


    def test_a_published_site_is_read_from_its_split_form(self):
        # `lantern build SITE` publishes only lantern/search.lantern.d/: the client names the
        # bundle as the widget's tag does, and gets the shards joined into the very same file.
        split = Path(BUNDLE + ".d")
        with tempfile.TemporaryDirectory() as site, tempfile.TemporaryDirectory() as cache:
            shutil.copytree(split, Path(site) / "lantern/search.lantern.d")
            shutil.copytree(split, Path(site) / "gap/search.lantern.d")
            shard = next(p for p in (Path(site) / "gap/search.lantern.d").iterdir() if p.name != "meta.bin")
            shard.unlink()
            server, base = serve_folder(site)
            try:
                url = f"{base}/lantern/search.lantern"

                async def body(s):
                    return structured(await s.call_tool("corpus_status", {}))

                status = run(over_stdio(url, body, "--cache-dir", cache))
                self.assertEqual(status["pages"], DOCS_PAGES)
                cached = list(Path(cache).glob("*.lantern"))
                self.assertEqual(len(cached), 1)
                self.assertEqual(cached[0].read_bytes(), Path(BUNDLE).read_bytes())
                # A shard missing on the server: a clear error naming it, nothing cached.
                p = subprocess.run(
                    [LANTERN, "mcp", f"{base}/gap/search.lantern", "--cache-dir", cache],
                    cwd=ROOT, capture_output=True, text=True, timeout=60,
                )
                self.assertNotEqual(p.returncode, 0)
                self.assertIn(shard.name, p.stderr)
                self.assertIn("404", p.stderr)
                self.assertNotIn("panicked", p.stderr)
                self.assertEqual(len(list(Path(cache).glob("*.lantern"))), 1)
            finally:
                server.kill()
                server.wait()


@unittest.skipUnless(RUST_BOOK, "LANTERN_RUST_BOOK_BUNDLE not set")
class RustBook(unittest.TestCase):
    def test_ownership(self):
        async def body(s):
            found = structured(await s.call_tool("search_docs", {"query": "What is ownership?"}))
            section = structured(await s.call_tool("get_section", {"id": found["hits"][0]["id"]}))
            status = structured(await s.call_tool("corpus_status", {}))
            return found, section, status

        found, section, status = run(over_stdio(RUST_BOOK, body))
        self.assertIn("ch04-01-what-is-ownership", found["hits"][0]["url"])
        self.assertIn("ownership", section["text"].lower())
        self.assertGreater(len(section["text"]), len(found["hits"][0]["excerpt"]))
        self.assertEqual(status["pages"], 112)


if __name__ == "__main__":
    sys.exit(unittest.main())
