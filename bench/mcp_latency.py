"""Latency of `lantern mcp` as an agent sees it: round trips over stdio with the official
Python MCP SDK, the model loaded once per server.

    tests/mcp/.venv/bin/python bench/mcp_latency.py BUNDLE GOLDEN.jsonl

Prints p50/p95 of search_docs in each mode over the golden questions (three passes), and of
corpus_status, the baseline measured in the same run: a round trip that does no search, so
the difference is what searching costs.
"""

import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parents[1]
LANTERN = str(ROOT / "target/release/lantern")


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round((len(xs) - 1) * p))]


async def main(bundle, golden):
    questions = [json.loads(l)["query"] for l in Path(golden).read_text().splitlines() if l.strip()]
    params = StdioServerParameters(command=LANTERN, args=["mcp", bundle], cwd=str(ROOT))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            await s.call_tool("search_docs", {"query": "warm up"})
            timings = {}
            for name, args in [("corpus_status", lambda q: {})] + [
                (f"search_docs {m}", lambda q, m=m: {"query": q, "mode": m})
                for m in ["keyword", "vector", "hybrid"]
            ]:
                tool = name.split()[0]
                ms = []
                for _ in range(3):
                    for q in questions:
                        t = time.perf_counter()
                        r = await s.call_tool(tool, args(q))
                        ms.append((time.perf_counter() - t) * 1000)
                        assert not r.is_error, r.content
                timings[name] = ms
    base = statistics.median(timings["corpus_status"])
    print(f"{len(questions)} questions x 3 passes over stdio, {bundle}")
    print(f"{'call':<22} {'p50 ms':>8} {'p95 ms':>8} {'p50 / corpus_status':>20}")
    for name, ms in timings.items():
        print(f"{name:<22} {pct(ms, 0.5):>8.2f} {pct(ms, 0.95):>8.2f} {pct(ms, 0.5) / base:>20.1f}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    asyncio.run(main(sys.argv[1], sys.argv[2]))
