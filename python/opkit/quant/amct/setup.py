"""Make a checkout of AMCT (hicann/amct) importable on a CPU, without touching the checkout.

AMCT's classic flow is plain Python + torch, but three things stand between a fresh checkout and
``import amct_pytorch.classic.graph_based.amct_pytorch``:

1. its ``*_pb2.py`` files are generated at build time by protoc (classic/graph_based/CMakeLists.txt, target
   ``amct_pytorch_proto_compile``); here grpcio-tools' protoc runs with the same ``-I`` / ``--python_out``
   arguments, on a copy of the package in a cache dir (the checkout stays as the user has it);
2. the package import pulls in the LLM algorithms, which import ``transformers``;
3. with torch >= 2.9 ``torch.onnx.export`` defaults to the dynamo exporter, whose graphs AMCT's ONNX parser does not
   read: :func:`torchscript_export` makes ``dynamo=False`` the default while AMCT runs.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ...errors import OpkitError

ENV = "OPKIT_AMCT"                       # the AMCT checkout
CACHE_ENV = "OPKIT_AMCT_CACHE"           # where the prepared copy goes (default ~/.cache/opkit/amct)
PROTO_DIR = "amct_pytorch/classic/graph_based/amct_pytorch/proto"
# classic/graph_based/CMakeLists.txt: four protos compiled from the repository root with -I=./ and -I=<proto dir>,
# two from inside the proto dir
ROOT_PROTOS = ("basic_info.proto", "calibration_config_pytorch.proto", "scale_offset_record_pytorch.proto",
               "retrain_config_pytorch.proto")
LOCAL_PROTOS = ("distill_config_pytorch.proto", "quant_calibration_config_pytorch.proto")
PACKAGE = "amct_pytorch.classic.graph_based.amct_pytorch"
NEEDS = ("onnx", "onnxruntime", "grpc_tools", "transformers", "google.protobuf")


@dataclass
class AmctCheckout:
    source: Path             # the user's checkout
    commit: str              # its git commit ('' when it is not a git checkout)
    prepared: Path           # the cache copy with the generated *_pb2.py files, put on sys.path

    def describe(self) -> str:
        return f"AMCT {self.commit[:12] or '(no git commit)'} from {self.source} (prepared in {self.prepared})"


def checkout_from_env() -> Path | None:
    v = os.environ.get(ENV, "").strip()
    return Path(v).expanduser() if v else None


def _commit(src: Path) -> str:
    try:
        out = subprocess.run(["git", "-C", str(src), "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


def _missing_modules() -> list[str]:
    out = []
    for m in NEEDS:
        try:
            importlib.import_module(m)
        except ImportError:
            out.append(m)
    return out


def _protoc(args: list[str], cwd: Path) -> None:
    from grpc_tools import protoc
    include = Path(protoc.__file__).parent / "_proto"      # google/protobuf/*.proto
    cmd = [sys.executable, "-m", "grpc_tools.protoc", f"-I={include}"] + args
    res = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if res.returncode != 0:
        raise OpkitError(f"AMCT set-up: protoc {' '.join(args)} (in {cwd}) failed:\n{res.stderr.strip()}")


def _fingerprint(src: Path, commit: str) -> str:
    h = hashlib.sha256(commit.encode())
    for p in sorted((src / PROTO_DIR).glob("*.proto")):
        h.update(p.read_bytes())
    if not commit:                       # no git: key on the package's file sizes and times
        for p in sorted((src / "amct_pytorch").rglob("*.py")):
            st = p.stat()
            h.update(f"{p}{st.st_size}{st.st_mtime_ns}".encode())
    return h.hexdigest()[:16]


def prepare(source: str | Path, cache: str | Path | None = None, log=print) -> AmctCheckout:
    """Copy ``source``'s amct_pytorch package into the cache (once per commit) and generate its protobuf modules."""
    src = Path(source).expanduser().resolve()
    if not (src / PROTO_DIR).is_dir():
        raise OpkitError(f"{ENV}={source}: not an AMCT checkout (no {PROTO_DIR}; clone "
                         "https://github.com/hicann/amct)")
    missing = _missing_modules()
    if missing:
        raise OpkitError(f"AMCT set-up: missing Python module(s) {', '.join(missing)}; install them with "
                         "pip install -e '.[amct]'")
    commit = _commit(src)
    root = Path(cache or os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "opkit" / "amct").expanduser()
    dest = root / _fingerprint(src, commit)
    done = dest / ".prepared"
    if not done.is_file():
        log(f"AMCT set-up: copying {src / 'amct_pytorch'} to {dest} and generating its *_pb2.py (protoc)")
        tmp = dest.with_name(dest.name + f".tmp{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.copytree(src / "amct_pytorch", tmp / "amct_pytorch",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*_pb2.py"))
        for proto in ROOT_PROTOS:
            _protoc(["-I=./", f"-I=./{PROTO_DIR}/", "--python_out=./", f"{PROTO_DIR}/{proto}"], tmp)
        for proto in LOCAL_PROTOS:
            _protoc(["-I=./", "--python_out=./", proto], tmp / PROTO_DIR)   # protoc alone implies -I=.
        (tmp / ".prepared").write_text(f"{src}\n{commit}\n")
        if dest.exists():                 # another process finished first
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            tmp.rename(dest)
    return AmctCheckout(src, commit, dest)


@contextlib.contextmanager
def torchscript_export():
    """``torch.onnx.export`` with ``dynamo=False`` unless the caller says otherwise (AMCT's parser reads the
    TorchScript exporter's graphs; torch >= 2.9 defaults to dynamo)."""
    import torch
    orig = torch.onnx.export

    @functools.wraps(orig)
    def export(*args, **kwargs):
        kwargs.setdefault("dynamo", False)
        return orig(*args, **kwargs)
    torch.onnx.export = export
    try:
        yield
    finally:
        torch.onnx.export = orig


def import_amct(checkout: AmctCheckout):
    """The classic graph-based API module (create_quant_config, quantize_model, save_model)."""
    path = str(checkout.prepared)
    loaded = sys.modules.get("amct_pytorch")
    if loaded is not None and not str(getattr(loaded, "__file__", "")).startswith(path):
        raise OpkitError(f"another amct_pytorch is already imported ({loaded.__file__}); run the AMCT oracle in a "
                         "fresh process")
    if path not in sys.path:
        sys.path.insert(0, path)
    os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
    try:
        return importlib.import_module(PACKAGE)
    except ImportError as e:
        raise OpkitError(f"AMCT set-up: importing {PACKAGE} from {path} failed: {e}") from e
