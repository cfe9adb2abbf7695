"""`python -m opkit.emulator.inventory`: the coverage table of the emulator against CANN's headers (and, with
--sources, against the names CANN's own kernels use). The reading and checking live in the package; this is
the command around them."""
from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from rich.console import Console
from rich.progress import Progress

from . import STATUSES, Decl, classify, commit_of, coverage_markdown, label, read_cann, write_docs
from . import __doc__ as PACKAGE_DOC
from .usage import kernels, scan


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m opkit.emulator.inventory", description=PACKAGE_DOC.split("\n")[0])
    ap.add_argument("--asc-devkit", type=Path, required=True, help="a local copy of CANN's asc-devkit repository")
    ap.add_argument("--sources", type=Path, nargs="*", default=None, metavar="DIR",
                    help="local copies of CANN's sample / op repositories (and asc-devkit, for its examples): "
                         "count which names their kernels use")
    ap.add_argument("--list", action="store_true", help="print every declaration and its status")
    ap.add_argument("--write-docs", type=Path, nargs="?", const=Path(__file__).resolve().parents[4] / "docs" / "emulator.md",
                    help="replace the coverage table in docs/emulator.md (or the file given)")
    args = ap.parse_args(argv)
    root = args.asc_devkit
    if not (root / "include" / "basic_api").is_dir():
        ap.error(f"--asc-devkit {root}: no include/basic_api here; pass a checkout of CANN's asc-devkit repository")
    for src in args.sources or ():
        if not src.is_dir():
            ap.error(f"--sources {src}: not a directory")
    decls = read_cann(root)
    status = classify(decls)
    uses, used_by = None, ""
    if args.sources is not None:
        uses, used_by = usage(decls, args.sources)
    if args.write_docs:
        write_docs(args.write_docs, coverage_markdown(decls, status, f"asc-devkit {commit_of(root)}", uses, used_by))
    if args.list:
        for i, (d, s) in enumerate(zip(decls, status)):
            used = f"\t{len(uses[i])}" if uses is not None else ""
            print(f"{s}\t{d.header}\t{d.kind}\t{d.scope}\t{label(d)}{used}")
    counts = Counter(status)
    print(", ".join(f"{counts[s]} {s}" for s in STATUSES), file=sys.stderr)
    if uses is not None:
        used = Counter(s for s, u in zip(status, uses) if u)
        print(f"used by CANN's kernels ({used_by}): "
              f"{used['implemented'] + used['documented difference']} implemented of {sum(used.values())} used, "
              f"{used['rejected']} rejected, {used['missing']} missing", file=sys.stderr)
    return 0


def usage(decls: list[Decl], sources: list[Path]) -> tuple[list[set[str]], str]:
    """Which kernels of the source checkouts use each declaration, and a one-line description of the sources."""
    found = {src: kernels(src) for src in sources}
    every = {name: files for k in found.values() for name, files in k.items()}
    with Progress(transient=True, console=Console(stderr=True)) as bar:
        task = bar.add_task("reading CANN's kernels", total=len(every))
        uses = scan(decls, every, progress=lambda: bar.advance(task))
    desc = ", ".join(f"{src.name} {commit_of(src)} ({len(found[src])})" for src in sources)
    return uses, f"{len(every)} kernels: {desc}"




if __name__ == "__main__":
    sys.exit(main())
