"""Parse rate of satcfdi (the most used Python CFDI library) over every *.xml file of a
directory: `python satcfdi_parse.py DIR` with satcfdi installed (bench/run puts it in
target/venv-satcfdi). Each file goes through satcfdi.cfdi.CFDI.from_file, its documented
way to load a CFDI. A file it refuses is counted and named, not fatal. Passes repeat
until they add up to 2 s (at least one); prints one JSON line: files, failed (name ->
error), rate (files per second, median of the passes)."""

import json
import os
import statistics
import sys
import time

from satcfdi.cfdi import CFDI


def one_pass(paths, failed):
    start = time.perf_counter()
    for path in paths:
        try:
            CFDI.from_file(path)
        except Exception as e:  # noqa: BLE001 - any refusal is counted, as asked
            failed[os.path.basename(path)] = f"{type(e).__name__}: {e}"[:200]
    return time.perf_counter() - start


def main(directory):
    paths = sorted(os.path.join(directory, f) for f in os.listdir(directory) if f.endswith(".xml"))
    one_pass(paths[:10], {})  # untimed: satcfdi loads its schemas and catalogs on first use
    failed, times = {}, []
    while not times or sum(times) < 2:
        times.append(one_pass(paths, failed))
    print(json.dumps({"files": len(paths), "failed": failed, "passes": len(times),
                      "rate": statistics.median(len(paths) / t for t in times)}))


if __name__ == "__main__":
    main(sys.argv[1])
