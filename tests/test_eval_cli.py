"""`opkit eval` and `opkit golden-set` on the command line; the Ray path on a local Ray instance equal to the
in-process run, sample for sample, with a killed Ray worker's shard rerun."""
from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from evaldata.models import known_set
from opkit.cli import main

HERE = Path(__file__).resolve().parent
POLICY = str(HERE / "evaldata" / "fp16-io.yaml")


def run(argv, capsys):
    with pytest.raises(SystemExit) as e:
        main(argv)
    out = capsys.readouterr()
    return (e.value.code or 0), out.out, out.err


def ok(argv, capsys):
    try:
        main(argv)
    except SystemExit as e:
        assert not e.code, capsys.readouterr()
    return capsys.readouterr()


@pytest.fixture
def known_pt(tmp_path):
    x, y = known_set(n=120, right=84, top5_extra=12, overflow=6)
    p = tmp_path / "known.pt"
    torch.save({"x": x, "y": y}, p)
    return p


def test_eval_json_interface(known_pt, capsys):
    out = ok(["eval", "evaldata.models:scaled", "--data", str(known_pt), "--policy", POLICY, "--workers", "1",
              "--topk", "1,5", "--json", "-"], capsys).out
    j = json.loads(out)
    assert j["n"] == 120 and j["variant"] == "fp16-io"
    assert j["fp32"]["top1"] == pytest.approx(70.0) and j["fp32"]["top5"] == pytest.approx(80.0)
    assert j["top1"] == pytest.approx(65.0) and j["top5"] == pytest.approx(75.0)     # 6 overflowed rows lost
    assert len(j["predictions"]) == 120 and j["predictions"][:6] == [-1] * 6
    assert [c["index"] for c in j["changed"]] == list(range(6))


def test_eval_text_and_html(known_pt, tmp_path, capsys):
    html = tmp_path / "r.html"
    out = ok(["eval", "evaldata.models:scaled", "--data", str(known_pt), "--policy", POLICY, "--workers", "1",
              "--topk", "1", "--topk", "3", "--html", str(html)], capsys).out
    assert "top-1    top-3" in out and "fp16-io                    65.00%" in out
    assert "-5.00 points top-1; 6 sample(s) changed (6 lost, 0 gained)" in out
    page = html.read_text()
    assert "Samples whose top-1 changed (fp16-io vs fp32): 6" in page and "65.00%" in page


@pytest.mark.parametrize("argv, said", [
    (["--record", "{pt}"], "--record goes with --quant CFG"),
    (["--mixlist", "{pt}"], "--mixlist goes with --policy cann-allow-mix-precision"),
    (["--policy", "no-such-policy"], "unknown policy 'no-such-policy'"),
])
def test_eval_bad_options(known_pt, capsys, argv, said):
    argv = [a.replace("{pt}", str(known_pt)) for a in argv]
    code, _, err = run(["eval", "evaldata.models:scaled", "--data", str(known_pt), "--workers", "1", *argv], capsys)
    assert code == 1 and said in err


def test_eval_bad_topk(known_pt, capsys):
    """--topk is a comma-separated list (or repeated); the old space-separated form is refused by click."""
    code, _, err = run(["eval", "evaldata.models:scaled", "--data", str(known_pt), "--topk", "0"], capsys)
    assert code == 2 and "Invalid value for '--topk': positive integers, comma-separated" in err
    code, _, err = run(["eval", "evaldata.models:scaled", "--data", str(known_pt), "--topk", "1", "5"], capsys)
    assert code == 2 and "unexpected extra argument (5)" in err


def test_golden_set_cli(tmp_path, capsys):
    src = tmp_path / "src"
    for c in ("cat", "dog"):
        (src / c).mkdir(parents=True)
        for i in range(5 if c == "cat" else 2):
            np.save(src / c / f"{i}.npy", np.full(3, i + (10 if c == "dog" else 0), np.float32))
    out = ok(["golden-set", str(src), str(tmp_path / "g"), "--per-class", "3"], capsys).out
    assert "golden set: 5 samples of 2 classes (3 per class, seed 0)" in out
    assert "1 class(es) have fewer than 3 samples: dog" in out
    m = json.loads((tmp_path / "g" / "manifest.json").read_text())
    assert f"data hash: {m['data_hash']}" in out
    code, _, err = run(["golden-set", str(src), str(tmp_path / "g")], capsys)
    assert code == 1 and "exists and is not an empty folder" in err


def test_ray_equals_local_and_reruns_a_killed_worker(tmp_path):
    """`opkit eval --ray auto` (no cluster running: a local Ray instance on this machine's cores): the same
    predictions as the in-process run, sample for sample; a worker killed mid-shard has its shard rerun."""
    pytest.importorskip("ray", reason="the Ray path needs ray (installed by the test extra)")
    x, y = known_set(n=64, right=40, top5_extra=8, overflow=4, seed=1)
    x[30, :] = 0.0
    x[30, 0] = 999.0                        # the transform kills its process the first time it reads this
    root = tmp_path / "set"
    for i in range(len(x)):
        d = root / f"c{int(y[i]):02d}"
        d.mkdir(parents=True, exist_ok=True)
        np.save(d / f"{i:03d}.npy", x[i].numpy())
    kills = tmp_path / "kills"
    kills.mkdir()
    env = {**os.environ, "OPKIT_TEST_KILL_DIR": str(kills), "PYTHONPATH": str(HERE)}
    common = ["evaldata.models:scaled", "--data", str(root), "--transform", "evaldata.models:kill_once",
              "--policy", POLICY, "--batch-size", "8", "--json", "-"]
    (kills / "killed-already").write_text("")           # the reference run must not die
    local = subprocess.run([sys.executable, "-m", "opkit", "eval", *common, "--workers", "1"], env=env,
                           capture_output=True, text=True, timeout=300)
    assert local.returncode == 0, local.stderr
    (kills / "killed-already").unlink()
    ray_run = subprocess.run([sys.executable, "-m", "opkit", "eval", *common, "--ray", "auto"], env=env,
                             capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert ray_run.returncode == 0, ray_run.stderr[-3000:]
    a, b = json.loads(local.stdout), json.loads(ray_run.stdout)
    assert b["run"]["backend"].startswith("ray (local instance)") and a["run"]["backend"] == "in-process"
    assert b["run"]["reruns"] >= 1 and list(kills.glob("killed-*"))
    assert "a Ray worker died: rerunning shard" in ray_run.stderr
    assert b["predictions"] == a["predictions"] and b["n"] == a["n"] == 64
    assert b["top1"] == a["top1"] and b["fp32"] == a["fp32"]
    assert "64/64" in ray_run.stderr                   # the progress bar counted every sample once



def test_ray_workers_keep_the_drivers_priority():
    """Ray renices its workers by +15 unless told otherwise; beside any busy process they then crawl (the Ray
    test above took over 300 s at load 8 instead of 13 s). A local instance's workers run at the driver's
    niceness."""
    pytest.importorskip("ray", reason="the Ray path needs ray (installed by the test extra)")
    from opkit.evaluate import ray_runner
    had = os.environ.get("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER")
    ray, backend, started = ray_runner.connect("auto")
    try:
        assert started, f"a Ray cluster was already running here ({backend}): this test needs a local instance"
        # the loopback-only switch is put back: left set, a later `ray start` of a real cluster refused to run
        assert os.environ.get("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER") == had
        assert [n["NodeManagerAddress"] for n in ray.nodes()] == ["127.0.0.1"]      # still loopback only
        assert ray.get(ray.remote(num_cpus=1)(lambda: os.nice(0)).remote()) == os.nice(0)
    finally:
        ray.shutdown()


def test_eval_patch_variant(known_pt, capsys):
    """`--patch`: the model with opkit.patch applied, under --policy; a model with nothing to swap says so."""
    j = json.loads(ok(["eval", "evaldata.models:scaled", "--data", str(known_pt), "--policy", POLICY, "--patch",
                       "--workers", "1", "--json", "-"], capsys).out)
    assert j["variant"] == "fp16-io+patch" and j["variants"][1]["patch"] is True
    assert j["top1"] == pytest.approx(65.0)
    assert "fp16-io+patch: opkit.patch found nothing to swap in this model" in j["notes"]


def test_eval_quant_config_and_record(tmp_path, capsys):
    """`--quant CFG --record REC`: the INT8 deployment (opkit.quant's variant) evaluated next to FP32."""
    from evaldata.models import overflow_net, overflow_set
    from opkit.quant.calibrate import calibrate
    from opkit.quant.config import default_config
    from opkit.quant.graph import read_graph
    from opkit.quant.records import write_record

    x, y = overflow_set(n=24, overflow=0)
    torch.save({"x": x, "y": y}, tmp_path / "val.pt")
    m = overflow_net()
    cfg = default_config(m)
    cfg.write(tmp_path / "quant.json")
    write_record(calibrate(m, x, cfg, read_graph(m, (x[:4],))), tmp_path / "record.txt")
    out = ok(["eval", "evaldata.models:overflow_net", "--data", str(tmp_path / "val.pt"), "--quant",
              str(tmp_path / "quant.json"), "--record", str(tmp_path / "record.txt"), "--workers", "1", "--json", "-"],
             capsys).out
    j = json.loads(out)
    assert j["variant"] == "int8" and j["fp32"]["top1"] == 100.0 and j["n"] == 24
    assert j["variants"][1]["quantized"] == ["conv"]
    assert 80.0 <= j["top1"] <= 100.0            # INT8 of a 1x1 conv on well-separated classes keeps most
    code, _, err = run(["eval", "evaldata.models:overflow_net", "--data", str(tmp_path / "val.pt"), "--quant",
                        str(tmp_path / "quant.json"), "--workers", "1"], capsys)
    assert code == 1 and "give the AMCT record file" in err


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def ray_cluster(nodes: int = 2):
    """A Ray cluster of `nodes` one-CPU nodes on this machine, started as docs/eval.md's recipe starts one on many
    (`ray start --head`, then `ray start --address` per node, each with its own temp dir), with token
    authentication on; yields (address, env for a driver, temp root). Every node is stopped at the end."""
    ray_bin = str(Path(sys.executable).parent / "ray")
    root = Path(tempfile.mkdtemp(prefix="opkray", dir="/tmp"))     # short: Ray's socket paths must fit 107 bytes
    env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}
    port = _free_port()
    address = f"127.0.0.1:{port}"
    common = ["--block", "--node-ip-address", "127.0.0.1", "--num-cpus", "1", "--disable-usage-stats"]
    procs = []

    def start(*args, name):
        log = open(root / f"{name}.log", "w")
        procs.append(subprocess.Popen([ray_bin, "start", *args, "--temp-dir", str(root / name), *common], env=env,
                                      stdout=log, stderr=subprocess.STDOUT))

    def active_nodes() -> int:
        r = subprocess.run([ray_bin, "status", "--address", address], env=env, capture_output=True, text=True)
        return sum(line.strip().startswith("1 node_") for line in r.stdout.split("Pending:")[0].splitlines())

    try:
        from ray._private.utils import get_ray_client_dependency_error
        # Ray Client (port 10001 by default) runs only where ray[client] is installed; the test extra has plain ray
        client = [] if get_ray_client_dependency_error() else ["--ray-client-server-port", str(_free_port())]
        start("--head", "--port", str(port), *client, "--include-dashboard", "false",
              "--system-config", json.dumps({"worker_niceness": 0}), name="head")
        for i in range(1, nodes):
            time.sleep(3 if i == 1 else 0)
            start("--address", address, name=f"node{i}")
        deadline = time.monotonic() + 120
        while active_nodes() < nodes:
            assert time.monotonic() < deadline, "the Ray cluster did not come up:\n" + "\n".join(
                (root / f).read_text()[-2000:] for f in os.listdir(root) if f.endswith(".log"))
            time.sleep(2)
        yield address, env, root
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(60)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(root, ignore_errors=True)


def _same_report(a: dict, b: dict, timing=("seconds", "eval_seconds", "eval_backends", "run")) -> None:
    strip = lambda d: {k: v for k, v in d.items() if k not in timing}  # noqa: E731
    assert strip(a) == strip(b)


def test_ray_two_node_cluster_equals_local(known_pt, tmp_path):
    """Issue 38: `opkit eval --ray ADDRESS` and `opkit quant --ray ADDRESS` on a two-node cluster (both nodes on
    this machine, separate temp dirs, token authentication as `ray start --head` sets it up) give the local
    run's report, sample for sample; both nodes ran workers."""
    pytest.importorskip("ray", reason="the Ray path needs ray (installed by the test extra)")
    sys.path.insert(0, str(HERE))
    from quantdata.models import inputs, labelled, mixed_scale
    m = mixed_scale()
    x, y = labelled(m, 64, seed=1)
    torch.save({"x": inputs(32, seed=2)}, tmp_path / "calib.pt")
    torch.save({"x": x, "y": y}, tmp_path / "val.pt")
    ev = ["eval", "evaldata.models:scaled", "--data", str(known_pt), "--policy", POLICY, "--batch-size", "8",
          "--json", "-"]
    qu = ["quant", f"{HERE / 'quantdata' / 'models.py'}:mixed_scale", "--calib", str(tmp_path / "calib.pt"),
          "--data", str(tmp_path / "val.pt"), "--batch-size", "16", "--json", "-"]

    def opkit_json(args, env):
        r = subprocess.run([sys.executable, "-m", "opkit", *args], env={**env, "PYTHONPATH": str(HERE)},
                           capture_output=True, text=True, timeout=600, cwd=tmp_path)
        assert r.returncode == 0, r.stderr[-3000:]
        return json.loads(r.stdout)

    local_eval, local_quant = opkit_json(ev + ["--workers", "1"], os.environ), opkit_json(qu + ["--workers", "1"],
                                                                                         os.environ)
    with ray_cluster(2) as (address, env, root):
        bare = {k: v for k, v in env.items() if k not in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN")}
        r = subprocess.run([sys.executable, "-m", "opkit", *ev, "--ray", address], env={**bare, "PYTHONPATH": str(HERE)},
                           capture_output=True, text=True, timeout=600, cwd=tmp_path)
        assert r.returncode != 0 and "set RAY_AUTH_MODE=token" in r.stderr     # no token: refused, and why
        ray_eval, ray_quant = opkit_json(ev + ["--ray", address], env), opkit_json(qu + ["--ray", address], env)
        workers = {n: len(list((root / n).glob("session_*/logs/python-core-worker-*.log"))) for n in ("head", "node1")}
    assert ray_eval["run"]["backend"] == f"ray ({address}), 2 CPUs" and local_eval["run"]["backend"] == "in-process"
    assert ray_eval["predictions"] == local_eval["predictions"] and ray_eval["n"] == 120
    _same_report(ray_eval, local_eval)
    assert ray_quant["eval_backends"][0] == f"ray ({address}), 2 CPUs"
    _same_report(ray_quant, local_quant)
    assert all(workers.values()), f"a node ran no worker: {workers}"
