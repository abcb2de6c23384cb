"""The round API (sia.run_round on objects) decides exactly as the JSON path (sia.allocate, i.e. sia_allocate) on
the same round: random requests (tests/python/test_allocate.py's generator, plus failed nodes, tenants and
non-preemptible jobs here) are given to both, the request turned into sia.Cluster / sia.Job / sia.RoundOptions by
the field meanings of examples/requests/README.md. Every decision field must agree: allocations, placements,
`changed`, reasons and their details, rejected jobs, the objective (bit for bit) and the prices."""

import random

import pytest

import sia
from test_allocate import random_request

BACKENDS = sia.available_backends()


def objects(request):
    """The request as the round API's objects."""
    c = request["cluster"]
    types = [sia.GpuType(t["name"], t["nodes"], t["gpus_per_node"]) for t in c["gpu_types"]]
    cluster = sia.Cluster(types, reserved=c.get("reserved"), down=c.get("down_by_type"))
    tenants = [sia.Tenant(name, max_gpus=t.get("max_gpus"), max_gpus_per_type=t.get("max_gpus_per_type"),
                          guaranteed_gpus=t.get("guaranteed_gpus", 0)) for name, t in c.get("tenants", {}).items()]
    p = request.get("policy", {})
    options = sia.RoundOptions(p=p.get("p", -0.5), lambda_=p.get("lambda", 1.1), backend=p.get("backend", "default"),
                               time_limit_ms=p.get("time_limit_ms", 10000), threads=p.get("threads", 0),
                               place=p.get("place", True), compute_prices=p.get("prices", True), tenants=tenants)
    jobs = []
    for j in request["jobs"]:
        kind = j.get("kind", "adaptive")
        min_gpus = j.get("min_gpus", j.get("pipeline_size", 1) if kind == "hybrid" else 1)
        max_gpus = j.get("max_gpus", min_gpus if kind == "rigid" else None)
        cur = j.get("current")
        current = None
        if cur:
            current = sia.Allocation(cur["gpu_type"], cur["gpus"], cur.get("nodes", 0),
                                     [(s["node"], s["gpus"], s.get("gpu_ids", ())) for s in cur.get("placement", [])])
        table = {(e["gpu_type"], e["gpus"], e.get("nodes", 0)): e["value"] for e in j["goodput"]}
        jobs.append(sia.Job(j["id"], goodput=table, kind=kind, min_gpus=min_gpus, max_gpus=max_gpus,
                            preemptible=j.get("preemptible", True), age_s=j.get("age_s", 0.0),
                            restarts=j.get("restarts", 0), restart_cost_s=j.get("restart_cost_s", 30.0),
                            weight=j.get("weight", 1.0), tenant=j.get("tenant"),
                            max_gpus_ever=j.get("max_gpus_ever"), current=current))
    return cluster, jobs, options


def extend(request, rng):
    """Failed nodes, tenants and non-preemptible jobs on top of test_allocate's requests."""
    types = request["cluster"]["gpu_types"]
    if rng.random() < 0.3:
        t = rng.choice(types)
        node = rng.randrange(t["nodes"])
        request["cluster"]["down"] = [f"{t['name']}/{node}"]
        request["cluster"]["down_by_type"] = {t["name"]: [node]}
    if rng.random() < 0.3:
        request["cluster"]["tenants"] = {"red": {"max_gpus": rng.randint(1, 8)},
                                         "blue": {"guaranteed_gpus": rng.randint(0, 2)}}
        for j in request["jobs"]:
            j["tenant"] = rng.choice(["red", "blue", None])
            if j["tenant"] is None:
                del j["tenant"]
    return request


def json_request(request):
    r = {k: v for k, v in request.items()}
    r["cluster"] = {k: v for k, v in request["cluster"].items() if k != "down_by_type"}
    return r


def as_json_decision(r):
    """The run_round result in the decision's JSON terms (the fields compared)."""
    allocations = []
    for d in r.decisions:
        if not d.allocated:
            continue
        a = {"job": d.job, "gpu_type": d.gpu_type, "nodes": d.nodes, "gpus": d.gpus, "changed": d.changed}
        if d.placement:
            a["placement"] = [{"node": s.name, "gpus": s.gpus, "gpu_ids": list(s.gpu_ids)} for s in d.placement]
            a["placement_status"] = d.placement_status
        allocations.append(a)
    unallocated = [{"job": d.job, "reason": d.reason, "detail": d.detail} for d in r.decisions if not d.allocated]
    return {"status": r.status, "objective": r.objective, "allocations": allocations, "unallocated": unallocated,
            "preempted": list(r.preempted), "evicted": list(r.evicted), "unmet": list(r.unmet)}


def from_allocate(d):
    allocations = [{k: a[k] for k in ("job", "gpu_type", "nodes", "gpus", "changed", "placement", "placement_status")
                    if k in a} for a in d["allocations"]]
    return {"status": d["status"], "objective": d["objective"], "allocations": allocations,
            "unallocated": d["unallocated"], "preempted": d.get("preempted", []), "evicted": d.get("evicted", []),
            "unmet": d.get("unmet", [])}


@pytest.mark.parametrize("seed", range(60))
def test_run_round_decides_as_allocate(seed):
    rng = random.Random(1000 + seed)
    backend = BACKENDS[seed % len(BACKENDS)]
    request = extend(random_request(rng, backend), rng)
    cluster, jobs, options = objects(request)
    via_json = sia.allocate(json_request(request))
    r = sia.run_round(cluster, jobs, options)
    got, expected = as_json_decision(r), from_allocate(via_json)
    # the JSON path names a rejected job's field by its JSON path and checks it while parsing; the round API
    # rejects it in the round: the same jobs, each rejected
    rejected_json = {x["job"] for x in via_json.get("rejected", [])}
    assert {x.job for x in r.rejected} == rejected_json
    for u in got["unallocated"] + expected["unallocated"]:
        if u["job"] in rejected_json:
            u["detail"] = ""
    assert got == expected
    # RoundResult.to_dict() is the program's decision (sia::decision_to_json), timings and rejection wording aside.
    mine = r.to_dict()
    for d in (mine, via_json):
        for k in ("solve_ms", "total_ms"):
            d.pop(k, None)
        for u in d["unallocated"]:
            if u["job"] in rejected_json:
                u["detail"] = ""
        for x in d.get("rejected", []):
            x["reason"] = ""  # the parser's words ("must be an integer in [1, ...]") against the round's
    assert mine == via_json
    prices = via_json.get("prices", {})
    assert r.prices.keys() == prices.keys()
    for t, v in prices.items():
        assert r.prices[t] == pytest.approx(v, rel=1e-9, abs=1e-12)
