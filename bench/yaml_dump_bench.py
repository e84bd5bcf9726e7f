"""Canonical YAML writing: PyYAML's emitter (`yamlfile.slow_dump`) against the fast
writer (`yamlfile.dump`, store/fastyaml.py) over the records of a generated calendar.

    python bench/yaml_dump_bench.py [--events 1000]

CPU seconds (`time.process_time`), so the ratio holds on a loaded machine.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from gen_calendar import generate

from calendar_app.store import fastyaml, yamlfile


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        generate(args.events, Path(tmp))
        records = [yamlfile.load(p.read_bytes()) for p in sorted(Path(tmp).rglob("*.yaml"))
                   if p.name != "calendar.yaml"]

    def cpu(write) -> float:
        started = time.process_time()
        for record in records:
            write(record)
        return time.process_time() - started

    slow, fast = cpu(yamlfile.slow_dump), cpu(yamlfile.dump)
    taken = sum(fastyaml.dump(r) is not None for r in records)
    print(f"{len(records)} records: emitter {slow:.2f} s CPU, fast writer {fast:.3f} s CPU "
          f"({slow / fast:.0f}x); fast path taken for {taken}")


if __name__ == "__main__":
    main()
