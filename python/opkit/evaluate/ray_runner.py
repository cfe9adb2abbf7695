"""Shards on a Ray cluster (``evaluate(..., ray="auto" | ADDRESS)``; ``pip install opkit[ray]``).

Each shard is one Ray task (one CPU). A worker process prepares the model and its variants once (a per-process
cache keyed by this run) -- loading or building opkit's kernels from its own cache as ``opkit.load`` does --
and returns the shard's predictions keyed by sample index. Tasks are not retried by Ray itself
(``max_retries=0``): a task whose worker died (``WorkerCrashedError``, a lost node) is submitted again here, up
to ``retries`` times, so reruns are counted, and the index-keyed merge (result.Merger) can never count a
sample twice. An error raised by the model or the data (OpkitError ...) is not retried: it is raised as is.

``ray="auto"``: the running cluster if there is one (``ray.init(address="auto")``), else a local Ray instance
on this machine's cores, shut down at the end. ``ray=ADDRESS``: that cluster (``ray://host:10001`` or
``host:6379``). On a remote cluster the model spec, the data path and the transform must resolve on every
node (a shared filesystem, or the same checkout); the driver's working directory and sys.path are passed on.
"""
from __future__ import annotations

import contextlib
import os
import sys
import uuid

from ..errors import OpkitError
from .shard import Prepared, described_variants

_CACHE: dict[str, Prepared] = {}


def _shard_task(key: str, sid: int, idx: list[int], k: int, batch_size: int, setup: tuple, ds):
    prep = _CACHE.get(key)
    if prep is None:
        ref, variants, sys_path, cwd = setup
        import torch
        torch.set_num_threads(1)                # one Ray CPU per task
        if cwd and os.path.isdir(cwd):
            os.chdir(cwd)                        # the workspace opkit.load() looks for, relative specs
        _CACHE.clear()                          # one run's model per worker process at a time
        prep = _CACHE[key] = Prepared(ref, ds, variants, sys_path)
    return sid, prep.run(idx, k, batch_size), [v.describe() for v in prep.variants]


def _import_ray():
    try:
        import ray
    except ImportError:
        raise OpkitError("--ray needs Ray: pip install 'opkit[ray]' (or pip install ray)") from None
    return ray


def connect(address: str):
    """(ray module, description, whether this call started the instance)."""
    ray = _import_ray()
    if ray.is_initialized():
        return ray, "ray (already connected)", False
    kw = {"include_dashboard": False, "log_to_driver": False}
    if address == "auto":
        try:
            ray.init(address="auto", **kw)
            return ray, "ray (running cluster)", False
        except ConnectionError:
            with _loopback_only(ray):
                # Ray renices its workers by +15 (RayConfig worker_niceness): beside any other busy process on the
                # machine they then get a few percent of a core and a 13 s run takes minutes. The evaluation is the
                # job the user asked for: its workers keep the driver's priority.
                ray.init(num_cpus=os.cpu_count() or 1, _system_config={"worker_niceness": 0}, **kw)
            return ray, "ray (local instance)", True
    try:
        ray.init(address=address, **kw)
    except Exception as e:  # noqa: BLE001 - any connection failure: name the address
        raise OpkitError(f"--ray {address}: cannot connect to the Ray cluster: {type(e).__name__}: {e}"
                         f"{_auth_hint()}") from None
    return ray, f"ray ({address})", False


def _auth_hint() -> str:
    """`ray start --head` turns token authentication on by default (Ray >= 2.5x), but a driver given an explicit
    address only sends the token when RAY_AUTH_MODE=token (ray/_private/worker.py: "an explicit address ... never
    auto-enables auth"): the usual reason a reachable cluster refuses the connection."""
    if os.environ.get("RAY_AUTH_MODE"):
        return ""
    return ("\n  if the cluster uses token authentication (the default of `ray start --head`), set RAY_AUTH_MODE=token "
            "here, with the cluster's token in ~/.ray/auth_token or RAY_AUTH_TOKEN (see docs/eval.md, "
            "'A Ray cluster')")


@contextlib.contextmanager
def _loopback_only(ray):
    """A local instance listens on the loopback address only, not on the machine's network interface.
    Ray resolves its node address to the loopback one when clusters are disabled (ray_constants
    ENABLE_RAY_CLUSTER, env RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER, read at import: set for the processes this
    instance starts, and on the already imported constant for this driver). Both are put back once the instance
    is up: left set, the variable reached every process started later from this one, and a `ray start` of a
    real cluster from there refused to run ("Multi-node Ray clusters are not supported")."""
    name, consts = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", ray._private.ray_constants
    before_env, before_const = os.environ.get(name), consts.ENABLE_RAY_CLUSTER
    os.environ[name], consts.ENABLE_RAY_CLUSTER = "0", False
    try:
        yield
    finally:
        consts.ENABLE_RAY_CLUSTER = before_const
        if before_env is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before_env


def run_on_ray(address, ref, ds, variants, shards, k, batch_size, merger, bar, retries):
    ray, backend, started = connect(address)
    try:
        if ref.spec is None and ref.module is not None:
            _by_value(ray, ref.module)
        cpus = int(ray.cluster_resources().get("CPU", 1))
        task = ray.remote(num_cpus=1, max_retries=0)(_shard_task)
        key = uuid.uuid4().hex
        setup = ray.put((ref, variants, list(sys.path), os.getcwd()))
        data = ray.put(ds)
        attempts = {sid: 0 for sid in range(len(shards))}
        pending = {}

        def submit(sid):
            attempts[sid] += 1
            pending[task.remote(key, sid, shards[sid], k, batch_size, setup, data)] = sid

        for sid in range(len(shards)):
            submit(sid)
        reruns, described = 0, None
        crashed = _crash_types(ray)
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for r in done:
                sid = pending.pop(r)
                try:
                    _, res, described = ray.get(r)
                except crashed as e:
                    if attempts[sid] > retries:
                        raise OpkitError(f"evaluate: shard {sid} (samples {shards[sid][0]}..{shards[sid][-1]}) lost "
                                         f"its Ray worker {attempts[sid]} times; giving up ({type(e).__name__})") from None
                    reruns += 1
                    bar.note(f"a Ray worker died: rerunning shard {sid} (samples {shards[sid][0]}..{shards[sid][-1]})")
                    submit(sid)
                    continue
                except ray.exceptions.RayTaskError as e:
                    cause = getattr(e, "cause", None)
                    if isinstance(cause, BaseException):
                        raise cause from None
                    raise
                bar.advance(merger.add(res))
        return f"{backend}, {cpus} CPUs", cpus, reruns, described_variants(variants, described)
    finally:
        if started:
            ray.shutdown()


def _crash_types(ray) -> tuple:
    ex = ray.exceptions
    names = ("WorkerCrashedError", "NodeDiedError", "LocalRayletDiedError", "OwnerDiedError", "ObjectLostError")
    return tuple(getattr(ex, n) for n in names if hasattr(ex, n))


def _by_value(ray, module) -> None:
    """A model class defined in a file loaded by spec (not importable on the workers) travels by value."""
    from importlib.util import find_spec
    for cls in type(module).__mro__ + tuple(type(m) for m in module.modules()):
        name = cls.__module__
        mod = sys.modules.get(name)
        if mod is None or name in ("builtins",) or name.startswith(("torch", "opkit.")):
            continue
        try:
            importable = find_spec(name) is not None
        except (ImportError, ValueError):
            importable = False
        if not importable:
            ray.cloudpickle.register_pickle_by_value(mod)
