"""The NPU target's machinery: CANN discovery (cann), glue rendering (glue), the torch-npu wheel
for --check-only (wheel, check), the graph-mode op package (package). backends/npu.py is the entry
point. Nothing here imports torch_npu: it cannot even be imported without CANN.
"""
