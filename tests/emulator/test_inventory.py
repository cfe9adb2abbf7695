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
