"""What a round costs through the Python round API (sia.run_round) beyond the C++ round, at 64 and 2048 GPUs
(a measurement, not a test).

    PYTHONPATH=build/python /usr/bin/python3 bench/python/round_api_overhead.py [--gpus 64 2048] [--reps N]

The same instances as bench/python/round_overhead.py (the paper's heterogeneous cluster scaled, 20 active jobs per
64 GPUs with goodput tables, about 60 % running), given as sia.Cluster and sia.Job objects (goodput mappings
{(type, gpus, nodes): value}). Minimum / median over the repetitions of:

  C++ round     the round alone, measured inside C++ (RoundResult.total_ms)
  +run_round    wall time of sia.run_round beyond its round (call by call): building the plain values from the
                dataclasses (Python), the C++ ClusterSpec/JobSpec/GoodputTable from them, and the result's
                dataclasses
  +as arrays    the same with each job's goodput as a (GPU counts x types) NumPy array
"""

import argparse
import pathlib
import statistics
import sys
import time

import sia

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from round_overhead import heterogeneous_request  # noqa: E402  (the instances of the JSON measurement)


def objects(request):
    """The request's cluster and jobs as sia objects (the fields these requests use)."""
    cluster = sia.Cluster([sia.GpuType(t["name"], t["nodes"], t["gpus_per_node"])
                           for t in request["cluster"]["gpu_types"]])
    jobs = []
    for j in request["jobs"]:
        table = {(e["gpu_type"], e["gpus"], e["nodes"]): e["value"] for e in j["goodput"]}
        current = j.get("current")
        jobs.append(sia.Job(j["id"], goodput=table, max_gpus=j.get("max_gpus"),
                            restart_cost_s=j.get("restart_cost_s", 30.0), age_s=j.get("age_s", 0.0),
                            restarts=j.get("restarts", 0), max_gpus_ever=j.get("max_gpus_ever"),
                            current=sia.Allocation(current["gpu_type"], current["gpus"]) if current else None))
    return cluster, jobs


def spread(samples):
    """min / median: on a loaded machine the minimum is the closer estimate of the work itself."""
    return f"{min(samples):.2f} / {statistics.median(samples):.2f}"


def measure(cluster, jobs, reps):
    rounds, extra = [], []
    for _ in range(reps):
        t0 = time.perf_counter()
        r = sia.run_round(cluster, jobs)
        wall = (time.perf_counter() - t0) * 1e3
        rounds.append(r.total_ms)
        extra.append(wall - r.total_ms)
    return spread(rounds), spread(extra), r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gpus", type=int, nargs="+", default=[64, 2048])
    ap.add_argument("--reps", type=int, default=0, help="repetitions (default 15 at 64 GPUs, 9 above)")
    args = ap.parse_args()
    print("| GPUs, jobs | C++ round (min / median) | +run_round (mappings) | +run_round (arrays) |")
    print("|---|---|---|---|")
    for gpus in args.gpus:
        scale = max(1, gpus // 64)
        cluster, jobs = objects(heterogeneous_request(scale, seed=scale))
        reps = args.reps or (15 if scale == 1 else 9)
        cpp, extra, r = measure(cluster, jobs, reps)
        arrays = [sia.Job(j.id, goodput=sia.goodput_array(j, cluster), max_gpus=j.max_gpus,
                          restart_cost_s=j.restart_cost_s, age_s=j.age_s, restarts=j.restarts,
                          max_gpus_ever=j.max_gpus_ever, current=j.current) for j in jobs]
        _, extra_arrays, ra = measure(cluster, arrays, reps)
        assert ra == r, "the array form decides as the mapping form"
        print(f"| {64 * scale}, {len(jobs)} | {cpp} ms | {extra} ms | {extra_arrays} ms |")


if __name__ == "__main__":
    main()
