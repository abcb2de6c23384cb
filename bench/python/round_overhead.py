"""What a round costs through Python against C++, at 64 and 2048 GPUs (a measurement, not a test).

    PYTHONPATH=build/python /usr/bin/python3 bench/python/round_overhead.py [--build-dir build] [--gpus 64 2048]

For each size it builds one request (the paper's heterogeneous cluster, 6 x 4 "aws" + 3 x 8 "rtx" + 2 x 8
"dgx-ext" GPUs per 64, scaled; 20 active jobs per 64 GPUs as bench/bench_common.hpp's Helios-like load, each with
a concave goodput table on every configuration, about 60 % running) and times, median over the repetitions:

  C++ round         run_round() alone, measured inside C++ (the decision's total_ms): what a C++ embedding pays
  +allocate_json    time of sia.allocate_json(text) beyond its round: parse_request and decision_to_json in C++,
                    the binding
  +allocate         time of sia.allocate(dict) beyond its round: the same + json.dumps of the request and
                    json.loads of the decision in Python (that part alone: "Py JSON")
  +sia_allocate     time of the program on the same request file beyond its round (process start, reading,
                    parsing, printing), for comparison

Each "+" figure is taken call by call (wall time minus the total_ms the same call reports), so the round's own
variance does not blur it. Rounds use the request's default backend (native) and all cores.
"""

import argparse
import json
import os
import pathlib
import random
import statistics
import subprocess
import sys
import tempfile
import time


def heterogeneous_request(scale, seed):
    types = [("aws", 6 * scale, 4), ("rtx", 3 * scale, 8), ("dgx-ext", 2 * scale, 8)]
    rng = random.Random(seed)
    free = {name: nodes * per_node for name, nodes, per_node in types}
    jobs = []
    for i in range(20 * scale):
        max_gpus = rng.choice([4, 6, 8, 10, 12, 16]) * (4 if rng.random() < 0.03 else 1)
        goodput = []
        for name, nodes, per_node in types:
            base, alpha, penalty = rng.uniform(0.5, 3.0), rng.uniform(0.5, 0.95), rng.uniform(0.75, 0.95)
            shapes = [(g, 1) for g in (1, 2, 4, 8) if g <= per_node]
            shapes += [(n * per_node, n) for n in range(2, nodes + 1) if n * per_node <= max_gpus]
            for gpus, n in shapes:
                if gpus <= max_gpus:
                    value = base * gpus ** alpha * penalty ** max(0, n.bit_length() - 1)
                    goodput.append({"gpu_type": name, "gpus": gpus, "nodes": n, "value": round(value, 6)})
        job = {"id": f"job-{i}", "max_gpus": max_gpus, "restart_cost_s": 30 + 10 * (i % 7), "goodput": goodput}
        if rng.random() < 0.6:
            name, _, per_node = rng.choice(types)
            gpus = 1
            while gpus * 2 <= min(max_gpus, per_node) and rng.random() < 0.6:
                gpus *= 2
            if free[name] >= gpus:
                free[name] -= gpus
                job["current"] = {"gpu_type": name, "gpus": gpus}
                job.update(age_s=round(rng.uniform(0, 7200), 1), restarts=rng.randint(0, 4), max_gpus_ever=gpus)
        jobs.append(job)
    return {"cluster": {"gpu_types": [{"name": n, "nodes": k, "gpus_per_node": g} for n, k, g in types]},
            "policy": {"p": -0.5, "lambda": 1.1, "time_limit_ms": 30000},
            "jobs": jobs}


def median_ms(samples):
    return statistics.median(samples) * 1e3


def measure(sia, request, reps, program):
    """Medians of the round's own time and of each path's time beyond it, taken call by call (wall time of the
    call minus the total_ms that same call reports), so that the round's variance does not blur the overhead."""
    text = json.dumps(request)
    sia.allocate(request)  # warm-up (first-use allocations, page faults)
    rounds, over_json, over_dict, over_prog, py_json = [], [], [], [], []
    for _ in range(reps):
        t0 = time.perf_counter()
        decision = sia.allocate(request)
        wall = time.perf_counter() - t0
        rounds.append(decision["total_ms"])
        over_dict.append(wall * 1e3 - decision["total_ms"])
        t0 = time.perf_counter()
        out = sia.allocate_json(text)
        wall = time.perf_counter() - t0
        over_json.append(wall * 1e3 - json.loads(out)["total_ms"])
        t0 = time.perf_counter()
        json.dumps(request)
        json.loads(out)
        py_json.append((time.perf_counter() - t0) * 1e3)
    if program is not None:
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            f.write(text)
        try:
            for _ in range(reps):
                t0 = time.perf_counter()
                p = subprocess.run([str(program), f.name], check=True, capture_output=True, text=True)
                over_prog.append((time.perf_counter() - t0) * 1e3 - json.loads(p.stdout)["total_ms"])
        finally:
            os.unlink(f.name)
    med = statistics.median
    return {
        "jobs": len(request["jobs"]),
        "status": decision["status"],
        "request_kib": len(text) / 1024,
        "round_ms": med(rounds),
        "over_json_ms": med(over_json),
        "over_dict_ms": med(over_dict),
        "py_json_ms": med(py_json),
        "over_program_ms": med(over_prog) if over_prog else float("nan"),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build-dir", default="build", help="CMake build tree (for examples/sia_allocate)")
    parser.add_argument("--gpus", type=int, nargs="+", default=[64, 2048], help="cluster sizes, multiples of 64")
    parser.add_argument("--reps", type=int, default=0, help="repetitions per size (default: 30 at <= 256 GPUs, else 7)")
    args = parser.parse_args()
    import sia  # after argparse: --help works without the package

    program = pathlib.Path(args.build_dir) / "examples" / "sia_allocate"
    program = program if program.exists() else None
    print(f"sia {sia.__version__}, Python {sys.version.split()[0]}, backend native, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f}; medians in ms")
    header = ("GPUs", "jobs", "KiB", "C++ round", "+allocate_json", "+allocate", "(of which Py JSON)",
              "+sia_allocate")
    print("{:>6} {:>5} {:>5} {:>10} {:>15} {:>10} {:>19} {:>14}".format(*header))
    for gpus in args.gpus:
        if gpus % 64:
            parser.error(f"--gpus: {gpus} is not a multiple of 64")
        reps = args.reps or (30 if gpus <= 256 else 7)
        r = measure(sia, heterogeneous_request(gpus // 64, seed=gpus // 64), reps, program)
        if r["status"] != "optimal":
            print(f"warning: {gpus} GPUs: round status {r['status']}", file=sys.stderr)
        print("{:>6} {:>5} {:>5.0f} {:>8.2f}ms {:>13.2f}ms {:>8.2f}ms {:>17.2f}ms {:>12.2f}ms".format(
            gpus, r["jobs"], r["request_kib"], r["round_ms"], r["over_json_ms"], r["over_dict_ms"], r["py_json_ms"],
            r["over_program_ms"]))


if __name__ == "__main__":
    main()
