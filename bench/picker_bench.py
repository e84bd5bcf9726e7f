"""Venue picker latency (issue 24 item 4: p95 under 50 ms at 5,000 venues).

    python bench/picker_bench.py [--venues 5000] [--queries 300] [--root DIR]

Generates a small calendar (bench/gen_calendar.py, 100 events) plus `--venues` venue
files, makes it a git repository, signs an editor in through the real Flask app (its
test client: no network, the whole request path of Flask, session, CSRF, the view and
the JSON) and times `--queries` GET /admin/api/venues/search?q=... as a person types
(1 to 6 letters of venue names and words, some matching nothing). Prints p50 / p95 /
max in ms and the load average (the machine is shared: read the load beside them).
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

from gen_calendar import WORDS, generate

from calendar_app.http.app import create_app
from calendar_app.store.users import UserStore


def make(root: Path, venues: int) -> Path:
    content = root / "content"
    generate(100, content)
    rng = random.Random(7)
    for i in range(venues):
        name = f"{rng.choice(WORDS).title()} {rng.choice(WORDS).title()} {i}"
        if i % 10 == 0:
            name = "The " + name
        (content / "venues" / f"bench-venue-{i}.yaml").write_text(
            f"id: {100_000 + i}\nname: {name}\nslug: bench-venue-{i}\nstatus: publish\n"
            f"city: Riverside\n")
    for args in (["init", "-q"], ["add", "-A"],
                 ["-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit", "-q",
                  "-m", "bench"]):
        subprocess.run(["git", *args], cwd=content, check=True)
    return content


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venues", type=int, default=5000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--root", type=Path, default=None)
    args = parser.parse_args()
    root = args.root or Path(tempfile.mkdtemp(prefix="picker-bench-"))
    content = make(root, args.venues)
    users = UserStore(root / "users.yaml")
    users.add("editor", "editor")
    users.set_sign_in_password("editor", "bench sign-in words")
    app = create_app({"CONTENT_DIR": str(content), "USERS_FILE": str(root / "users.yaml"),
                      "CACHE_DIR": str(root / "cache"), "TESTING": True})
    client = app.test_client()
    page = client.get("/admin/sign-in").data.decode()
    token = re.search(r'name="csrf_token" value="([^"]+)"', page)[1]
    client.post("/admin/sign-in", data={"name": "editor", "password": "bench sign-in words",
                                        "csrf_token": token})
    rng = random.Random(11)
    words = [w for w in WORDS if len(w) > 2] + ["zzq", "the blue", "hall"]
    queries = [rng.choice(words)[:rng.randint(1, 6)] for _ in range(args.queries)]
    found = client.get("/admin/api/venues/search?q=" + queries[0])  # warm up
    assert found.status_code == 200, found.data[:300]
    times = []
    for q in queries:
        t0 = time.perf_counter()
        answer = client.get("/admin/api/venues/search", query_string={"q": q})
        times.append((time.perf_counter() - t0) * 1000)
        assert answer.status_code == 200
    times.sort()
    p95 = times[int(len(times) * 0.95) - 1]
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    print(f"{args.venues} venues, {len(times)} searches: p50 {statistics.median(times):.1f} ms, "
          f"p95 {p95:.1f} ms, max {times[-1]:.1f} ms (load {load})")


if __name__ == "__main__":
    main()
