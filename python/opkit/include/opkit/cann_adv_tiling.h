// Field lists of CANN's advanced-API tiling structs that opkit implements, shared by the host stand-in
// (python/opkit/cannproject/include/tiling/tiling_api.h: optiling:: classes with set_/get_) and the kernel side
// (python/opkit/emulator/include/opkit_emu/adv_tiling.h: plain structs), so both lay them out alike.
// Fields as in mirror-cann/asc-devkit include/adv_api/activation/softmax_tilingdata.h and
// logsoftmax_tilingdata.h (16 uint32_t each, same names).
#pragma once

#define OPKIT_SOFTMAX_TILING_FIELDS(F)                                                                  \
  F(uint32_t, srcM) F(uint32_t, srcK) F(uint32_t, srcSize) F(uint32_t, outMaxM) F(uint32_t, outMaxK)     \
  F(uint32_t, outMaxSize) F(uint32_t, splitM) F(uint32_t, splitK) F(uint32_t, splitSize) F(uint32_t, reduceM) \
  F(uint32_t, reduceK) F(uint32_t, reduceSize) F(uint32_t, rangeM) F(uint32_t, tailM) F(uint32_t, tailSplitSize) \
  F(uint32_t, tailReduceSize)

// TCubeTiling, the matmul tiling a vector op's tiling struct may declare (a field it never reads on the vector
// side): 50 int32_t as in mirror-cann/asc-devkit@82b89a15 include/adv_api/matmul/matmul_tilingdata.h:21-72.
#define OPKIT_TCUBE_TILING_FIELDS(F) \
  F(int32_t, usedCoreNum) F(int32_t, M) F(int32_t, N) F(int32_t, Ka) F(int32_t, Kb) F(int32_t, singleCoreM) \
  F(int32_t, singleCoreN) F(int32_t, singleCoreK) F(int32_t, baseM) F(int32_t, baseN) F(int32_t, baseK) \
  F(int32_t, depthA1) F(int32_t, depthB1) F(int32_t, stepM) F(int32_t, stepN) F(int32_t, isBias) \
  F(int32_t, transLength) F(int32_t, iterateOrder) F(int32_t, shareMode) F(int32_t, shareL1Size) \
  F(int32_t, shareL0CSize) F(int32_t, shareUbSize) F(int32_t, batchM) F(int32_t, batchN) \
  F(int32_t, singleBatchM) F(int32_t, singleBatchN) F(int32_t, stepKa) F(int32_t, stepKb) \
  F(int32_t, depthAL1CacheUB) F(int32_t, depthBL1CacheUB) F(int32_t, dbL0A) F(int32_t, dbL0B) \
  F(int32_t, dbL0C) F(int32_t, ALayoutInfoB) F(int32_t, ALayoutInfoS) F(int32_t, ALayoutInfoN) \
  F(int32_t, ALayoutInfoG) F(int32_t, ALayoutInfoD) F(int32_t, BLayoutInfoB) F(int32_t, BLayoutInfoS) \
  F(int32_t, BLayoutInfoN) F(int32_t, BLayoutInfoG) F(int32_t, BLayoutInfoD) F(int32_t, CLayoutInfoB) \
  F(int32_t, CLayoutInfoS1) F(int32_t, CLayoutInfoN) F(int32_t, CLayoutInfoG) F(int32_t, CLayoutInfoS2) \
  F(int32_t, BatchNum) F(int32_t, mxTypePara)

// Tiling structs of CANN's tiling_api.h the emulator does not implement: the cube (matrix) unit's, which a
// vector-core emulator cannot run, and advanced vector APIs not written yet. Using one stops the build with
// "not supported on the emulator: NAME".
#define OPKIT_CUBE_TILING_STRUCTS(X) X(TCubeTiling) OPKIT_CUBE_TILING_STRUCTS_BUT_TCUBE(X)
// the kernel side declares TCubeTiling (OPKIT_TCUBE_TILING_FIELDS) and rejects only these
#define OPKIT_CUBE_TILING_STRUCTS_BUT_TCUBE(X)                                                            \
  X(TConv3DApiTiling) X(TConv3DBpFilterTiling) X(Conv3DBpFilterParams)                     \
  X(TConv3DBpFilterBasicBlockTiling) X(Conv3DBackpropFilterTilingData) X(TConv3DBackpropInputTiling)      \
  X(Conv3DBackpropInputTilingData) X(Mc2ServerCfg) X(Mc2HcommCfg) X(Mc2InitTiling) X(Mc2CcTiling)
#define OPKIT_OTHER_ADV_TILING_STRUCTS(X)                                                                 \
  X(RmsNormTiling)
