"""The API inventory (python -m opkit.emulator.inventory) on a small header tree written here in the shape of
CANN's asc-devkit (include/basic_api/*.h): what it lists and how it classifies each name against the
emulator. The real run reads a local asc-devkit checkout and is not part of the suite (docs/emulator.md)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from opkit.emulator import inventory as inv

HEADER = """
#ifndef FAKE_INTF_H
#define FAKE_INTF_H
#define PUBLIC_MACRO 1
#define _PRIVATE_MACRO 2
#pragma begin_pipe(V)
namespace AscendC {
enum class Mode : uint8_t { A = 0, B, C };
/* @ingroup Add Level 0 */
template <typename T, bool isSetMask = true>
__aicore__ inline void Add(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
    uint64_t mask[], const uint8_t repeatTime, const BinaryRepeatParams& repeatParams);
template <typename T>
__aicore__ inline void Add(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
    const int32_t& count);
#if __NPU_ARCH__ == 3510
template <typename T> __aicore__ inline void OnlyOnArch3510(const LocalTensor<T>& dst);
#endif
template <typename T> __aicore__ inline void FrobnicateVec(const LocalTensor<T>& dst, const int32_t& count);
template <typename T> __aicore__ inline void Mmad(const LocalTensor<T>& dst, const LocalTensor<T>& a);
__aicore__ inline void SetAtomicNone();
template <typename T>
__aicore__ inline void TransDataTo5HD(const LocalTensor<T> (&dstList)[NCHW_CONV_ADDR_LIST_SIZE],
    const LocalTensor<T> (&srcList)[NCHW_CONV_ADDR_LIST_SIZE], const TransDataTo5HDParams& nchwconvParams);
template <typename T> __aicore__ inline void SetAtomicAdd();
class Widget {
public:
    __aicore__ inline Widget();
    __aicore__ inline int32_t Size() const;
private:
    __aicore__ inline void Hidden();
};
}  // namespace AscendC
#endif
"""


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("asc-devkit")
    (root / "include" / "basic_api").mkdir(parents=True)
    (root / "include" / "basic_api" / "kernel_operator_fake_intf.h").write_text(HEADER)
    return root


def test_lists_public_names_for_a2(tree):
    decls = inv.read_cann(tree)
    names = {(d.kind, d.name, d.form) for d in decls}
    assert ("function", "Add", "level-0 (mask[])") in names and ("function", "Add", "level-2 (count)") in names
    assert ("enum", "Mode", "") in names and ("value", "Mode::B", "Mode") in names
    assert ("class", "Widget", "") in names and ("member", "Widget::Size", "") in names
    assert ("member", "Widget::Widget", "") in names
    assert ("macro", "PUBLIC_MACRO", "") in names
    flat = {n for _, n, _ in names}
    assert "OnlyOnArch3510" not in flat          # #if resolved for A2
    assert "Widget::Hidden" not in flat          # private member
    assert "_PRIVATE_MACRO" not in flat and "FAKE_INTF_H" not in flat


def test_classifies_against_the_emulator(tree):
    decls = inv.read_cann(tree)
    status = {inv.label(d): s for d, s in zip(decls, inv.classify(decls))}
    assert status["Add [level-2 (count)]"] == "implemented"
    assert status["Add [level-0 (mask[])]"] == "implemented"
    assert status["SetAtomicNone()"] == "implemented"
    # a reference-to-array parameter is probed as one (TransDataTo5HD's LocalTensor list form)
    arr = "const LocalTensor<T>(&)[NCHW_CONV_ADDR_LIST_SIZE]"
    assert status[f"TransDataTo5HD({arr}, {arr}, const TransDataTo5HDParams&)"] == "implemented"
    assert status["SetAtomicAdd()"] == "documented difference"
    assert status["Mmad(const LocalTensor<T>&, const LocalTensor<T>&)"] == "rejected"
    assert status["FrobnicateVec [level-2 (count)]"] == "missing"
    assert status["Widget"] == "missing" and status["Mode::B"] == "missing"


def test_writes_the_coverage_table_between_markers(tree, tmp_path):
    decls = inv.read_cann(tree)
    table = inv.coverage_markdown(decls, inv.classify(decls), "asc-devkit test")
    assert "| `include/basic_api/kernel_operator_fake_intf.h` |" in table and "`FrobnicateVec [level-2 (count)]`" in table
    doc = tmp_path / "emulator.md"
    doc.write_text(f"before\n{inv.BEGIN}\nold table\n{inv.END}\nafter\n")
    inv.write_docs(doc, table)
    text = doc.read_text()
    assert text.startswith("before\n") and text.endswith("after\n") and "old table" not in text and table in text


def test_refuses_a_directory_that_is_not_asc_devkit(tmp_path):
    r = subprocess.run([sys.executable, "-m", "opkit.emulator.inventory", "--asc-devkit", str(tmp_path)],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "no include/basic_api here" in r.stderr


# ---- which names CANN's kernels use (inventory/usage.py), on a small tree in the ops-repository layout ----
KERNEL_FOO = """
#include "kernel_operator.h"
using namespace AscendC;
class KernelFoo {
public:
    __aicore__ inline void Init() { Widget w; }
    __aicore__ inline void Compute() {
        Add(x, y, z, 64);
        AscendC::FrobnicateVec(x, 8);
        auto m = Mode::B;
        int n = w.Size();
    }
    Widget w;
};
"""
KERNEL_BAZ = """
__aicore__ inline void FrobnicateVec(int a, int b) { }
class Other { public: int Size() const; };
__aicore__ void Run() {
    FrobnicateVec(1, 2);
    Other w;
    w.Size();
    BinaryRepeatParams params;
    Add(x, y, z, 64, 2, params);
    Add(x, y, z, 64, 2, unknownParams);
}
"""


@pytest.fixture(scope="module")
def ops(tmp_path_factory):
    root = tmp_path_factory.mktemp("ops")
    files = {"math/foo/op_kernel/foo.cpp": KERNEL_FOO,
             "math/foo/op_host/foo_tiling.cpp": "void Tiling() { Mmad(a, b, c); }",                # host side
             "math/bar/op_kernel/arch35/bar.cpp": "__aicore__ void K() { FrobnicateVec(x, 1); }",  # 950 only
             "math/baz/op_kernel/baz.cpp": KERNEL_BAZ}
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_kernels_of_an_ops_checkout(ops):
    from opkit.emulator.inventory import usage as iu
    found = iu.kernels(ops)
    assert sorted(found) == [f"{ops.name}:math/baz", f"{ops.name}:math/foo"]   # no host file, no arch35 kernel


def test_counts_the_kernels_using_each_name(tree, ops):
    from opkit.emulator.inventory import usage as iu
    decls = inv.read_cann(tree)
    uses = {inv.label(d): u for d, u in zip(decls, iu.scan(decls, iu.kernels(ops)))}
    foo, baz = f"{ops.name}:math/foo", f"{ops.name}:math/baz"
    assert uses["Add [level-2 (count)]"] == {foo}               # 4 arguments: the count form
    assert uses["Add [level-0 (mask[])]"] == {baz}              # 6 arguments: a level-0 form
    assert uses["FrobnicateVec [level-2 (count)]"] == {foo}     # baz defines its own FrobnicateVec
    assert uses["Widget::Widget()"] == {foo} and uses["Widget"] == {foo}
    assert uses["Widget::Size()"] == {foo}                      # baz's w is an Other
    assert uses["Mode::B"] == {foo} and uses["Mode::A"] == set()
    assert uses["Mmad(const LocalTensor<T>&, const LocalTensor<T>&)"] == set()  # only on the host side


def test_coverage_table_says_how_many_used_names_are_implemented(tree, ops):
    from opkit.emulator.inventory import usage as iu
    decls = inv.read_cann(tree)
    status = inv.classify(decls)
    uses = iu.scan(decls, iu.kernels(ops))
    table = inv.coverage_markdown(decls, status, "asc-devkit test", uses, "2 kernels")
    used = [s for s, u in zip(status, uses) if u]
    done = sum(s in ("implemented", "documented difference") for s in used)
    assert f"**{done} implemented of {len(used)} used**" in table
    assert "`FrobnicateVec [level-2 (count)]` (1)" in table and "`Widget::Widget()` (1)" in table


def test_cli_lists_uses(tree, ops):
    r = subprocess.run([sys.executable, "-m", "opkit.emulator.inventory", "--asc-devkit", str(tree), "--sources",
                        str(ops), "--list"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    rows = {line.split("\t")[4]: line.split("\t")[5] for line in r.stdout.splitlines()}
    assert rows["FrobnicateVec [level-2 (count)]"] == "1" and rows["Add [level-2 (count)]"] == "1"
    assert "used by CANN's kernels (2 kernels" in r.stderr
