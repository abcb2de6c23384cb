#!/usr/bin/python3
"""A scheduler's main loop on sia, in Python: 200 rounds of 60 s on a 56-GPU cluster with job arrivals,
completions and node failures (and repairs), carrying each job's state between rounds with sia.RoundState
(the C++ sia::advance_round_state; docs/round-state.md).

    PYTHONPATH=build/python /usr/bin/python3 examples/python/scheduler_loop.py [--rounds N] [--seed S]
        [--verbose] [--log FILE]

It is examples/scheduler_loop.cpp written against the Python package, and makes the same decisions on the same
input: the same random numbers (splitmix64), the same jobs, the same goodput curves (the job's goodput is a
Python function the round calls back), the same failures. ``--log FILE`` writes the decisions in the format the
C++ example writes with the same option; tests/python/test_round_loop.py runs both and compares the logs.

Every round it checks, independently of the library, what a scheduler relies on: no GPU type and no node
holds more GPUs than it has, no GPU is given twice, no job runs on a failed node, the 2x rule holds, ``age_s``
is the time since arrival, and ``restarts`` equals the restarts the loop itself sees. It prints "scheduler loop:
... invariants hold" and exits 0, or names the first violation ("FAILED ...") and exits 1.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass, field
from typing import Optional

import sia

ROUND_S = 60.0
MASK = (1 << 64) - 1


class Random:
    """splitmix64, as in the C++ example: the same numbers in both languages."""

    def __init__(self, seed: int) -> None:
        self.s = seed & MASK

    def next(self) -> int:
        self.s = (self.s + 0x9E3779B97F4A7C15) & MASK
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def uniform(self) -> float:  # [0, 1)
        return (self.next() >> 11) * 2.0**-53

    def below(self, n: int) -> int:
        return self.next() % n


@dataclass
class Workload:
    """What the loop knows about a job beyond sia's description and state: its work and its speed."""

    work: float = 0.0  # samples left to process
    scaling: float = 0.8  # exponent of the speed-up curve
    speed: dict = field(default_factory=dict)  # samples/s of one GPU of each type
    arrival_round: int = 0
    restarts_seen: int = 0  # counted by the loop, not by sia
    largest_seen: int = 0  # largest count the job ran with, counted by the loop
    held: Optional[sia.Allocation] = None  # what the loop saw it hold (None once a failure killed it)

    def goodput(self, gpu_type: str, nodes: int, gpus: int) -> float:
        # Sub-linear scaling and a penalty per extra node: the kind of curve a fitted model gives.
        return self.speed[gpu_type] * math.pow(gpus, self.scaling) * math.pow(0.9, nodes - 1)


class Failure(Exception):
    pass


def by_node(placement) -> dict:
    return {s.node: frozenset(s.gpu_ids) for s in placement}


def main(argv: Optional[list] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--seed", type=int, default=15)
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--log", help="write the decisions to this file (the C++ example's format)")
    args = ap.parse_args(argv)
    if not 0 <= args.rounds <= 1000000 or not 0 <= args.seed <= 1000000:
        ap.error("--rounds and --seed: expected an integer in [0, 1000000]")
    log = open(args.log, "w") if args.log else None

    cluster = sia.Cluster([sia.GpuType("a100", nodes=4, gpus_per_node=8), sia.GpuType("t4", nodes=6, gpus_per_node=4)])
    repair_round: dict = {}  # (type, node) -> round it comes back
    rng = Random(args.seed)
    jobs: list[sia.Job] = []  # descriptions, in arrival order
    loads: list[Workload] = []  # the loop's own view, same order
    state = sia.RoundState()  # sia's state of each job
    options = sia.RoundOptions(backend="native", time_limit_ms=None, threads=1)  # deterministic

    arrived = completed = failures = lost = restarts = most_active = job_number = 0
    try:
        for rnd in range(args.rounds):
            # Arrivals: 0.55 jobs per round on average; a third rigid, a few of those non-preemptible.
            a = rng.uniform()
            new_jobs = 0 if a < 0.55 else 1 if a < 0.9 else 2
            for _ in range(new_jobs):
                w = Workload(arrival_round=rnd)
                w.scaling = 0.6 + 0.35 * rng.uniform()
                a100 = 100.0 * (1.0 + rng.uniform())
                w.speed = {"a100": a100, "t4": a100 * (0.2 + 0.3 * rng.uniform())}
                w.work = a100 * ROUND_S * (10 + 100 * rng.uniform())  # 10-110 rounds on one a100
                j = sia.Job(f"job{job_number}", goodput=w.goodput, restart_cost_s=30)
                job_number += 1
                if rng.uniform() < 1.0 / 3:
                    n = (1, 2, 4, 6, 8, 12)[rng.below(6)]
                    j.kind, j.min_gpus, j.max_gpus, j.preemptible = "rigid", n, n, rng.uniform() >= 0.1
                else:
                    j.min_gpus, j.max_gpus = 1, 8 << rng.below(3)
                state.track(j)
                jobs.append(j)
                loads.append(w)
                arrived += 1
            most_active = max(most_active, len(jobs))

            # The round.
            r = state.run_round(cluster, jobs, options)
            if len(r.decisions) != len(jobs):
                raise Failure(f"round {rnd}: one decision per job expected")
            if log:
                log.write(f"{rnd} round {r.status} {r.objective:.17g}\n")
                for d in r.decisions:
                    if not d.allocated:
                        log.write(f"{rnd} {d.job} - {d.reason}\n")
                        continue
                    where = "".join(f" {s.node}:{','.join(map(str, s.gpu_ids))}" for s in d.placement)
                    log.write(f"{rnd} {d.job} {d.gpu_type} {d.nodes} {d.gpus} {int(d.changed)}{where}\n")

            # Invariants of the decision, checked from the cluster and the placements alone.
            used = {t.name: 0 for t in cluster.types}
            node_gpus: dict = {}
            for j, w, d in zip(jobs, loads, r.decisions):
                if not d.allocated:
                    continue
                used[d.gpu_type] += d.gpus  # a rigid job is charged its count, not its footprint
                per_node = cluster.types[cluster.type_index(d.gpu_type)].gpus_per_node
                for s in d.placement:
                    if cluster.is_down(d.gpu_type, s.node):
                        raise Failure(f"round {rnd}: {d.job} placed on failed node {s.name}")
                    held = node_gpus.setdefault((d.gpu_type, s.node), set())
                    for g in s.gpu_ids:
                        if not 0 <= g < per_node or g in held:
                            raise Failure(f"round {rnd}: GPU {g} of {s.name} given twice or absent")
                        held.add(g)
                if sum(s.gpus for s in d.placement) != d.gpus:
                    raise Failure(f"round {rnd}: {d.job}: placement does not hold {d.gpus} GPUs")
                # The 2x rule (adaptive jobs): a job that never ran takes its minimum; later at most twice its largest.
                if j.kind == "adaptive":
                    cap = j.min_gpus if w.largest_seen == 0 else max(2 * w.largest_seen, j.min_gpus)
                    if d.gpus > cap:
                        raise Failure(f"round {rnd}: {d.job} got {d.gpus} GPUs, above the 2x cap {cap}")
            for t in cluster.types:
                if used[t.name] > cluster.up_gpus(t.name):
                    raise Failure(f"round {rnd}: {t.name}: {used[t.name]} GPUs used of {cluster.up_gpus(t.name)}")

            # The loop's own restart count: a job that ran before and now holds other GPUs than it held.
            for j, w, d in zip(jobs, loads, r.decisions):
                if not d.allocated:
                    w.held = None
                    continue
                same = (w.held is not None and w.held.gpu_type == d.gpu_type
                        and by_node(w.held.placement) == by_node(d.placement))
                if not same and w.largest_seen > 0:
                    w.restarts_seen += 1
                # Progress: the round's goodput, minus the restart cost when it (re)started.
                run_s = ROUND_S if same else max(0.0, ROUND_S - j.restart_cost_s)
                w.work -= w.goodput(d.gpu_type, d.nodes, d.config_gpus) * run_s
                w.largest_seen = max(w.largest_seen, d.gpus)
                w.held = d.allocation

            # Between rounds: node failures (about one every 12 rounds) and repairs (10 rounds later).
            nxt = cluster.copy()
            for key in sorted(repair_round):
                if repair_round[key] == rnd + 1:
                    t, node = key
                    nxt.down[cluster.types[t].name].remove(node)
                    del repair_round[key]
            if rng.uniform() < 1.0 / 12:
                t = rng.below(2)
                node = rng.below(nxt.types[t].nodes)
                # Half of the failures hit a node of a job spread over several nodes: the case where the job's
                # configuration itself disappears (sia forgets it; the round must not see it again).
                wide = [(cluster.type_index(w.held.gpu_type), s.node) for w in loads
                        if w.held is not None and len(w.held.placement) > 1 for s in w.held.placement]
                if wide and rng.uniform() < 0.5:
                    t, node = wide[rng.below(len(wide))]
                name = nxt.types[t].name
                if not nxt.is_down(t, node):
                    nxt.down.setdefault(name, []).append(node)
                    repair_round[(t, node)] = rnd + 11
                    failures += 1
                    # The loop sees its jobs there die.
                    for w in loads:
                        if w.held is not None and w.held.gpu_type == name and any(
                                s.node == node for s in w.held.placement):
                            w.held = None
                    if args.verbose:
                        print(f"round {rnd}: node {nxt.node_name(t, node)} failed")
                    if log:
                        log.write(f"{rnd} failed {nxt.node_name(t, node)}\n")

            changes = state.advance(r, ROUND_S, nxt)
            lost += len(changes.lost)
            cluster = nxt

            # sia's state against the loop's own view.
            for j, w in zip(jobs, loads):
                s = state[j.id]
                if s.restarts != w.restarts_seen:
                    raise Failure(f"round {rnd}: {s.id}: sia counts {s.restarts} restarts, the loop saw "
                                  f"{w.restarts_seen}")
                if s.max_gpus_ever != w.largest_seen:
                    raise Failure(f"round {rnd}: {s.id}: largest count differs")
                if s.age_s != (rnd + 1 - w.arrival_round) * ROUND_S:
                    raise Failure(f"round {rnd}: {s.id}: age_s is not the time since arrival")
                if s.id in changes.lost and s.current is not None:
                    raise Failure(f"round {rnd}: {s.id}: lost but still holds GPUs")
            if args.verbose:
                print(f"round {rnd}: {len(jobs)} jobs, {r.status}, objective {r.objective:g}, a100 {used['a100']} "
                      f"t4 {used['t4']} GPUs, {len(changes.restarted)} restarted, {len(changes.lost)} lost")

            # Completions.
            for i in reversed(range(len(jobs))):
                if loads[i].work <= 0:
                    restarts += state[jobs[i].id].restarts
                    state.forget(jobs[i].id)
                    del jobs[i], loads[i]
                    completed += 1
    except Failure as f:
        print(f"scheduler loop: FAILED {f}")
        return 1
    except (ValueError, RuntimeError) as e:
        print(f"scheduler loop: FAILED (sia) {e}")
        return 1
    finally:
        if log:
            log.close()
    restarts += sum(s.restarts for s in state)
    print(f"scheduler loop: {args.rounds} rounds, {arrived} jobs arrived, {completed} completed, at most "
          f"{most_active} at once, {failures} node failures, {lost} allocations lost, {restarts} restarts; "
          "invariants hold")
    return 0


if __name__ == "__main__":
    sys.exit(main())
