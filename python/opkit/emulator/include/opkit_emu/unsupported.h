// Names of CANN's kernel API the emulator rejects at compile time, each with the reason: using one stops the
// build with "not supported on the emulator: NAME (<reason>; see docs/emulator.md)". Two kinds:
//  - the cube (matrix) unit and its buffers (L1, L0A/B/C, BIAS, FIXBUF): the emulator runs vector cores;
//  - vector-side names CANN's headers declare but the chip profile does not have (the API page's product
//    list says "Atlas A2 ...: 不支持" = not supported on A2).
// Each fails at its first use, ahead of any other error that use causes (g++ instantiates a function template's
// body only at the end of the file, so a plain static_assert there came after, e.g., "has no member named"):
//  - a function: a catch-all template with a deduced return type, so the body (the static_assert) is instantiated
//    at the call that selects it. It takes C variadic arguments (`...`), the worst-ranked match: a kernel's own
//    function of the same name always wins overload resolution, so the catch-all only answers calls nothing else
//    could take;
//  - a struct, class or enum: an alias of a class template whose body fails, instantiated where the type must be
//    complete (an object declared, a member set or named, one constructed);
//  - a constant: converting it to anything fails at the conversion.
// Code that never names one still compiles. The boundary: what g++ checks at a definition counts as a use even if
// the code is never instantiated, called or constructed -- a data member or a by-value parameter of a rejected type
// (also in a class or function template), sizeof of one, and a non-dependent call of a rejected function in a
// template, a discarded `if constexpr` branch or a decltype detection idiom (a hard error, not SFINAE). These
// compiled before the first-use forms. No use: a declaration without a definition, a reference or pointer, a local
// of an uninstantiated function template, an uncalled member function of a class template, a dependent call
// (tests/emulator/test_cube_rejected.py pins both lists).
// (Not covered: a braced list passed straight to a rejected function,
// `Mmad(c, a, b, {m, n, k})`, is "invalid use of brace-enclosed initializer list" at that call.)
// python -m opkit.emulator.inventory reads the OPKIT_EMU_REJECT_* lines below (one name each).
#pragma once

namespace opkit_emu {
template <class...> inline constexpr bool always_false = false;
template <auto...> inline constexpr bool always_false_v = false;
}  // namespace opkit_emu

#define OPKIT_EMU_REJECT_MSG(NAME, WHY) "not supported on the emulator: " #NAME " (" WHY "; see docs/emulator.md)"
// a function (explicit template arguments, if any, are types)
#define OPKIT_EMU_REJECT_FN(NAME, WHY)                                                        \
  namespace AscendC {                                                                         \
  template <class... T>                                                                       \
  inline auto NAME(...) {                                                                     \
    static_assert(::opkit_emu::always_false<T...>, OPKIT_EMU_REJECT_MSG(NAME, WHY));          \
  }                                                                                           \
  }
// a function whose explicit template arguments are values (enumerators, integers)
#define OPKIT_EMU_REJECT_FN_V(NAME, WHY)                                                      \
  namespace AscendC {                                                                         \
  template <auto... V>                                                                        \
  inline auto NAME(...) {                                                                     \
    static_assert(::opkit_emu::always_false_v<V...>, OPKIT_EMU_REJECT_MSG(NAME, WHY));        \
  }                                                                                           \
  }
// a struct, class or enum: an alias of a class template (instantiated, and failing, where the type must be complete)
#define OPKIT_EMU_REJECT_TYPE(NAME, WHY)                                                      \
  namespace opkit_emu::rejected {                                                             \
  template <class P = void>                                                                   \
  struct NAME {                                                                               \
    static_assert(::opkit_emu::always_false<P>, OPKIT_EMU_REJECT_MSG(NAME, WHY));             \
  };                                                                                          \
  }                                                                                           \
  namespace AscendC {                                                                         \
  using NAME = ::opkit_emu::rejected::NAME<>;                                                 \
  }
// a class template with type parameters / with value parameters
#define OPKIT_EMU_REJECT_TEMPLATE(NAME, WHY)                                                  \
  namespace AscendC {                                                                         \
  template <class... P>                                                                       \
  struct NAME {                                                                               \
    static_assert(::opkit_emu::always_false<P...>, OPKIT_EMU_REJECT_MSG(NAME, WHY));          \
  };                                                                                          \
  }
#define OPKIT_EMU_REJECT_TEMPLATE_V(NAME, WHY)                                                \
  namespace AscendC {                                                                         \
  template <auto... P>                                                                        \
  struct NAME {                                                                               \
    static_assert(::opkit_emu::always_false_v<P...>, OPKIT_EMU_REJECT_MSG(NAME, WHY));        \
  };                                                                                          \
  }

// a class template with a type, then value parameters (MultiCopyParams<T, dim>)
#define OPKIT_EMU_REJECT_TEMPLATE_TV(NAME, WHY)                                               \
  namespace AscendC {                                                                         \
  template <class T, auto... P>                                                               \
  struct NAME {                                                                               \
    static_assert(::opkit_emu::always_false<T>, OPKIT_EMU_REJECT_MSG(NAME, WHY));             \
  };                                                                                          \
  }
// a constant (CFG_ROW_MAJOR): converting it to anything fails (the default argument is substituted, and Fail<T>
// instantiated, where the conversion is tried)
#define OPKIT_EMU_REJECT_CONST(NAME, WHY)                                                     \
  namespace opkit_emu {                                                                       \
  struct Rejected_##NAME {                                                                    \
    template <class T>                                                                        \
    struct Fail {                                                                             \
      static_assert(::opkit_emu::always_false<T>, OPKIT_EMU_REJECT_MSG(NAME, WHY));           \
      using type = T;                                                                         \
    };                                                                                        \
    template <class T, class = typename Fail<T>::type>                                        \
    constexpr operator T() const {                                                            \
      return T{};                                                                             \
    }                                                                                         \
  };                                                                                          \
  }                                                                                           \
  namespace AscendC {                                                                         \
  inline constexpr ::opkit_emu::Rejected_##NAME NAME{};                                       \
  }

#define OPKIT_EMU_CUBE "the cube unit is not emulated"
#define OPKIT_EMU_NOT_A2 "not available on Atlas A2 per its API page"

// ---- cube: matrix multiply, loads into L0A/L0B, Fixpipe out of L0C, conv/gemm, AIPP, cube groups ----
// The names are those asc-devkit 82b89a15 declares for the cube side: the functions of
// include/basic_api/kernel_operator_mm_intf.h (LoadData :64 ... SetMMLayoutTransform :512) and
// kernel_operator_fixpipe_intf.h (SetFixPipeConfig :57 ... Fixpipe :80); the structs of kernel_struct_mm.h
// (LoadData2DParams :42 ... CheckLocalMemoryIAParam :545; LoadData3DParamsV1/V2 :156/:222 and InitConstValueParams
// :444 are class templates over a type), kernel_struct_fixpipe.h (CO2Layout :42, FixpipeConfig :48,
// FixpipeParamsV220 :106; TransformParams :169, FixpipeParamsArch3510 :190, FixpipeParamsC310 :225 are templates over
// a CO2Layout), kernel_operator_mm_bitmode_intf.h (:32-144), kernel_struct_conv2d.h (LoopMode :37 ... GemmTiling
// :134), kernel_struct_aipp.h (:29-94; AippPaddingParams, AippChannelPaddingParams, AippParams over a type) and
// the L1 copies' structs of kernel_struct_data_copy.h (DataCopyCO12DstParams :150, Nd2NzParams :259, Nz2NdParamsFull
// :311, Dn2NzParams :335). python -m opkit.emulator.inventory checks the list against the headers (0 missing there).
OPKIT_EMU_REJECT_FN(Mmad, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_FN(MmadMx, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_FN(MmadWithSparse, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_FN(LoadData, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_FN(LoadDataWithTranspose, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_FN(LoadDataWithSparse, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_FN(LoadDataWithStride, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_FN(LoadDataUnzip, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_FN(LoadUnzipIndex, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_FN(LoadImageToLocal, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_FN(BroadCastVecToMM, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_FN(InitConstValue, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_FN(Fill, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_FN(Fixpipe, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_FN(SetFixPipeConfig, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_FN(SetFixpipeNz2ndFlag, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_FN(SetFixpipePreQuantFlag, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_FN(SetFixPipeClipRelu, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_FN(SetFixPipeAddr, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_FN(SetFmatrix, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_FN(SetLoadDataBoundary, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_FN(SetLoadDataPaddingValue, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_FN(SetLoadDataRepeat, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_FN(SetLoadDataRepeatWithStride, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_FN(SetHF32Mode, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_FN(SetHF32TransMode, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_FN(SetMMLayoutTransform, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_FN(SetMMColumnMajor, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_FN(SetMMRowMajor, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_FN(Conv2D, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_FN(GetConv2dTiling, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_FN(Gemm, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_FN(GetGemmTiling, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_FN(SetAippFunctions, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_FN(CreateCubeResGroup, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_FN(DataCopyL1ToUB, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TYPE(MmadParams, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TYPE(MmadBitModeParams, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TYPE(LoadData2DParams, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TYPE(LoadData2DParamsV2, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TYPE(LoadData2DMxParams, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TYPE(LoadData2dTransposeParams, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TYPE(LoadData2dTransposeParamsV2, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TEMPLATE(LoadData3DParamsV1, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TEMPLATE(LoadData3DParamsV2, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TYPE(LoadData3DParamsV2Pro, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TYPE(LoadDataRepeatParam, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TYPE(LoadDataRepeatParamWithStride, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TYPE(Load2DBitModeParam, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TYPE(Load3DBitModeParam, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TYPE(SetFMatrixBitModeParams, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TEMPLATE(InitConstValueParams, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TYPE(LoadImageToLocalParams, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TYPE(FixpipeParamsV220, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TEMPLATE_V(FixpipeParamsC310, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TEMPLATE_V(FixpipeParamsArch3510, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TYPE(FixpipeConfig, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TYPE(Conv2dParams, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TYPE(Conv2dTilling, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TYPE(GemmTiling, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TYPE(CheckLocalMemoryIAParam, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TYPE(KfcWorkspace, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TYPE(CubeResGroupHandle, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TYPE(Nd2NzParams, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TYPE(Nd2NzParamsV2, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TYPE(Dn2NzParams, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TYPE(Nz2NdParamsFull, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TYPE(DataCopyCO12DstParams, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TEMPLATE_V(TransformParams, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TEMPLATE(AippPaddingParams, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TYPE(AippSwapParams, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TYPE(AippSingleLineParams, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TYPE(AippDataTypeConvParams, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TEMPLATE(AippChannelPaddingParams, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TYPE(AippColorSpaceConvParams, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TYPE(AippInputFormat, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TYPE(CO2Layout, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TYPE(FmatrixMode, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TYPE(HF32Mode, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TYPE(HF32TransMode, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TYPE(LoopMode, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TYPE(LoadData2dParams, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TYPE(FixpipeParamsM300, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TYPE(FixpipeParamsM310, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_CONST(CFG_ROW_MAJOR, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_CONST(CFG_COLUMN_MAJOR, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_CONST(CFG_NZ, OPKIT_EMU_CUBE)
OPKIT_EMU_REJECT_TEMPLATE_V(TSCM, "TSCM queues hold the cube's L1 buffer, which is not emulated")
OPKIT_EMU_REJECT_TEMPLATE(AippParams, OPKIT_EMU_CUBE)

// ---- vector-side names that Atlas A2 does not have ----
OPKIT_EMU_REJECT_FN(Neg, OPKIT_EMU_NOT_A2)
// the scalar-position-flexible / scalar logic forms (asc-devkit 82b89a15 docs/zh/api/SIMD-API/基础API/Memory矢量计算/
// 基础算术/Subs（灵活标量位置）.md, Divs（灵活标量位置）.md, 逻辑计算/Ands.md, Ors.md: "Atlas A2 ...: 不支持")
OPKIT_EMU_REJECT_FN(Subs, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_FN(Divs, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_FN(Ands, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_FN(Ors, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_FN(AbsSub, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_FN(FusedAbsSub, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_FN(ExpSub, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_FN(Mull, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_FN(Prelu, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_FN(MulsCast, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_FN(Truncate, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_FN(VectorPadding, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_FN(Interleave, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_FN(DeInterleave, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_FN(Scatter, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_FN(ProposalConcat, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_FN(ProposalExtract, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_FN(RpSort16, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_FN(MrgSort4, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_FN(AtomicAdd, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_FN(AtomicMax, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_FN(AtomicMin, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_FN(AtomicCas, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_FN(AtomicExch, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_FN(AllocMutexID, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_FN(ReleaseMutexID, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_TYPE(Mutex, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_FN(NdDmaDci, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_FN(SetLoopModePara, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_FN(ResetLoopModePara, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_FN(GetUBSizeInBytes, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_FN(GetVecLen, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_FN(GetRuntimeUBSize, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_FN(GetSsbufBaseAddr, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_FN(asc_vf_call, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_FN(Nop, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_FN_V(GetSpr, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_FN_V(ClearSpr, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_FN_V(ResetCtrlSpr, OPKIT_EMU_NOT_A2)
// multi-dimensional DMA (DataCopy（GMToUB多维数据搬运NDDMA）.md and SetLoopModePara.md: not on A2)
OPKIT_EMU_REJECT_TYPE(LoopModeParams, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_TYPE(NdDmaConfig, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_TYPE(MultiCopyConfig, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_TEMPLATE_V(NdDmaLoopInfo, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_TEMPLATE_V(MultiCopyLoopInfo, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_TEMPLATE_TV(NdDmaParams, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_TEMPLATE_TV(MultiCopyParams, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_CONST(kDefaultNdDmaConfig, OPKIT_EMU_NOT_A2)
OPKIT_EMU_REJECT_CONST(kDefaultMultiCopyConfig, OPKIT_EMU_NOT_A2)
// CANN implements it for the 950 only (impl/basic_api/kernel_operator_scalar_intf_impl.h)
OPKIT_EMU_REJECT_FN(GetUintDivMagicAndShift, "CANN implements it for Ascend 950 only")

// ---- communication between devices (HCCL, MC2 kernels) ----
OPKIT_EMU_REJECT_FN_V(GetHcclContext, "HCCL communication between devices is not emulated")
OPKIT_EMU_REJECT_FN_V(SetHcclContext, "HCCL communication between devices is not emulated")

// ---- one declaration of a name, the other forms implemented: rejected where defined, listed here for the
// inventory (`OPKIT_EMU_REJECT_FORM: <CANN header> <name>` -- every form that header declares) ----
// OPKIT_EMU_REJECT_FORM: include/basic_api/kernel_operator_vec_binary_intf.h ShiftLeft   (opkit_emu/bitwise.h)
// OPKIT_EMU_REJECT_FORM: include/basic_api/kernel_operator_vec_binary_intf.h ShiftRight  (opkit_emu/bitwise.h)
// OPKIT_EMU_REJECT_FORM: include/basic_api/kernel_operator_data_copy_intf.h DataCopy const_LocalTensor<U>&,_const_DataCopyParams&,_const_DataCopyEnhancedParams&   (opkit_emu/datacopy_enhanced.h)
