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

// Tiling structs of CANN's tiling_api.h the emulator does not implement: the cube (matrix) unit's, which a
// vector-core emulator cannot run, and advanced vector APIs not written yet. Using one stops the build with
// "not supported on the emulator: NAME".
#define OPKIT_CUBE_TILING_STRUCTS(X)                                                                      \
  X(TCubeTiling) X(TConv3DApiTiling) X(TConv3DBpFilterTiling) X(Conv3DBpFilterParams)                     \
  X(TConv3DBpFilterBasicBlockTiling) X(Conv3DBackpropFilterTilingData) X(TConv3DBackpropInputTiling)      \
  X(Conv3DBackpropInputTilingData) X(Mc2ServerCfg) X(Mc2HcommCfg) X(Mc2InitTiling) X(Mc2CcTiling)
#define OPKIT_OTHER_ADV_TILING_STRUCTS(X)                                                                 \
  X(UnPadTiling) X(PadTiling) X(TopkTiling) X(LayerNormTiling) X(LayerNormSeparateTiling)                 \
  X(LayerNormGradBetaTiling) X(RmsNormTiling) X(BatchNormTiling) X(GroupNormTiling) X(DeepNormTiling)      \
  X(LayerNormGradTiling) X(ConfusionTransposeTiling)
