// Kernel-side tiling macros, expanded as CANN's CPU-debug build expands them.
//
// Sources (read, not copied): mirror-cann/asc-devkit
//   tools/build/asc_op_compile_base/adapter/get_op_tiling.py  -- the header CANN generates for an op's kernel
//     from its host tiling registration: under ASCENDC_CPU_DEBUG, GET_TILING_DATA(_WITH_STRUCT) declares a
//     variable of the struct and copies sizeof(struct) bytes from the tiling argument (InitTilingData);
//     GET_TILING_DATA_MEMBER copies one member from its offset; the _PTR_ form gives a pointer to a copy.
//   impl/basic_api/utils/kernel_utils_macros.h -- TILING_KEY_IS(k) is (TILING_KEY_VAR == (k)), TILING_KEY_LIST
//     ORs up to eight of those; REGISTER_TILING_DEFAULT / REGISTER_TILING_FOR_TILINGKEY / REGISTER_NONE_TILING
//     only record the struct for the build (a section variable), they generate no code.
//   docs/zh/api/SIMD-API/基础API/Kernel-Tiling/*.md -- GET_TILING_DATA gives the *default* registered struct
//     (REGISTER_TILING_DATA_CLASS of the op type itself when several are registered).
//
// Which struct GET_TILING_DATA reads: REGISTER_TILING_DEFAULT(T) (in the kernel or at namespace scope), else
// the op's struct registered by the op_host tiling header with REGISTER_TILING_DATA_CLASS
// (register/tilingdata_base.h). Both declare an overload of opkit_tiling_registered_; overload resolution
// ranks them (int: REGISTER_TILING_DEFAULT, long: the op's registration, ...: none), so the macros need no
// state. Registrations of nested structs (`<Struct>Op`, CANN's convention for TILING_DATA_FIELD_DEF_STRUCT)
// and of per-tiling-key structs (`<Op>_<key>`) are not the default; define OPKIT_CANN_OP_TYPE=<OpType> to
// name the op outright when a header registers structs for several ops.
#pragma once
#include <cstddef>
#include <cstdint>

#define OPKIT_TILING_CAT_(a, b) a##b
#define OPKIT_TILING_CAT(a, b) OPKIT_TILING_CAT_(a, b)
#define OPKIT_TILING_STR_(a) #a
#define OPKIT_TILING_STR(a) OPKIT_TILING_STR_(a)

namespace opkit_emu {
template <int Kind, int N>
struct TilingKind {};
struct NoRegisteredTiling;
template <class T, class D = void>
struct TilingChosen {
  using type = T;
};
template <class D>
struct TilingChosen<NoRegisteredTiling, D> {
  static_assert(sizeof(D*) == 0, "GET_TILING_DATA: no tiling struct is registered; include the op_host tiling header "
                              "(REGISTER_TILING_DATA_CLASS) or write REGISTER_TILING_DEFAULT(Struct)");
  using type = NoRegisteredTiling;
};
constexpr bool tiling_str_eq(const char* a, const char* b) {
  while (*a && *a == *b) ++a, ++b;
  return *a == *b;
}
// 0: the op's own struct (the default); 1: a nested-struct or per-tiling-key registration.
constexpr int tiling_reg_kind(const char* op, const char* class_op) {
#ifdef OPKIT_CANN_OP_TYPE
  return (void)class_op, tiling_str_eq(op, OPKIT_TILING_STR(OPKIT_CANN_OP_TYPE)) ? 0 : 1;
#else
  if (tiling_str_eq(op, class_op)) return 1;
  const char* e = op;
  while (*e) ++e;
  const char* d = e;
  while (d > op && d[-1] >= '0' && d[-1] <= '9') --d;
  return (d < e && d > op && d[-1] == '_') ? 1 : 0;
#endif
}
}  // namespace opkit_emu
::opkit_emu::NoRegisteredTiling opkit_tiling_registered_(...);
#define OPKIT_TILING_DEFAULT_TYPE \
  typename ::opkit_emu::TilingChosen<decltype(opkit_tiling_registered_(::opkit_emu::TilingKind<0, 0>{}, 0))>::type

// The struct is copied from GM (bounds-checked: a short tiling buffer is a gm-bounds violation).
#define GET_TILING_DATA_WITH_STRUCT(Type, var, tiling) \
  Type var;                                            \
  ::opkit_emu::load_tiling(&var, sizeof(Type), (tiling), ::opkit_emu::SrcLoc::current())
#define GET_TILING_DATA(var, tiling)                                   \
  using OPKIT_TILING_CAT(OpkitTilingOf_, var) = OPKIT_TILING_DEFAULT_TYPE; \
  GET_TILING_DATA_WITH_STRUCT(OPKIT_TILING_CAT(OpkitTilingOf_, var), var, tiling)
#define GET_TILING_DATA_MEMBER(Type, member, var, tiling)                                                    \
  decltype(Type::member) var;                                                                               \
  ::opkit_emu::load_tiling(&var, sizeof(var), reinterpret_cast<const uint8_t*>(tiling) + offsetof(Type, member), \
                           ::opkit_emu::SrcLoc::current())
#define __tiling_data_ptr__
#define GET_TILING_DATA_PTR_WITH_STRUCT(Type, ptr, tiling) \
  GET_TILING_DATA_WITH_STRUCT(Type, OPKIT_TILING_CAT(opkit_tiling_copy_, ptr), tiling); \
  __tiling_data_ptr__ Type* ptr = &OPKIT_TILING_CAT(opkit_tiling_copy_, ptr)
#define COPY_TILING_WITH_STRUCT(Type, src_ptr, dst_ptr)                                        \
  Type OPKIT_TILING_CAT(opkit_tiling_copy_, dst_ptr) = *reinterpret_cast<const Type*>(src_ptr); \
  Type* dst_ptr = &OPKIT_TILING_CAT(opkit_tiling_copy_, dst_ptr)
#define COPY_TILING_WITH_ARRAY(arr_type, arr_count, src_ptr, dst_ptr)                                   \
  struct OPKIT_TILING_CAT(OpkitTilingArr_, dst_ptr) { arr_type v[arr_count]; }                          \
  OPKIT_TILING_CAT(opkit_tiling_copy_, dst_ptr) =                                                      \
      *reinterpret_cast<const OPKIT_TILING_CAT(OpkitTilingArr_, dst_ptr)*>(src_ptr);                   \
  arr_type(*dst_ptr)[arr_count] = &OPKIT_TILING_CAT(opkit_tiling_copy_, dst_ptr).v

// Registration: only which struct GET_TILING_DATA means (CANN records these for its build, no code).
#define REGISTER_TILING_DEFAULT(Type) Type opkit_tiling_registered_(::opkit_emu::TilingKind<0, 0>, int)
#define REGISTER_TILING_FOR_TILINGKEY(expression, Type) static_assert(sizeof(Type) > 0, "")
#define REGISTER_NONE_TILING

// TILING_KEY_VAR is one identifier, as CANN's CPU-debug build has it (`g_tilingKey`, asc-devkit
// impl/basic_api/utils/kernel_utils_macros.h:423-433): a run-time value in code, and in `#if TILING_KEY_VAR == K`
// (the device build compiles once per key with -DTILING_KEY_VAR=key) an unknown identifier, i.e. 0, exactly as in
// CANN's CPU-debug build.
namespace opkit_emu {
inline uint64_t current_tiling_key();  // opkit_emu/runtime.h
struct TilingKeyVar {
  operator uint64_t() const { return current_tiling_key(); }
};
}  // namespace opkit_emu
inline constexpr ::opkit_emu::TilingKeyVar opkit_emu_tiling_key_var{};
#ifndef TILING_KEY_VAR
#define TILING_KEY_VAR opkit_emu_tiling_key_var
#endif
#define TILING_KEY_IS(k) (static_cast<uint64_t>(TILING_KEY_VAR) == static_cast<uint64_t>(k))
#define OPKIT_TILING_KEY_1(a) TILING_KEY_IS(a)
#define OPKIT_TILING_KEY_2(a, ...) OPKIT_TILING_KEY_1(a) || OPKIT_TILING_KEY_1(__VA_ARGS__)
#define OPKIT_TILING_KEY_3(a, ...) OPKIT_TILING_KEY_1(a) || OPKIT_TILING_KEY_2(__VA_ARGS__)
#define OPKIT_TILING_KEY_4(a, ...) OPKIT_TILING_KEY_1(a) || OPKIT_TILING_KEY_3(__VA_ARGS__)
#define OPKIT_TILING_KEY_5(a, ...) OPKIT_TILING_KEY_1(a) || OPKIT_TILING_KEY_4(__VA_ARGS__)
#define OPKIT_TILING_KEY_6(a, ...) OPKIT_TILING_KEY_1(a) || OPKIT_TILING_KEY_5(__VA_ARGS__)
#define OPKIT_TILING_KEY_7(a, ...) OPKIT_TILING_KEY_1(a) || OPKIT_TILING_KEY_6(__VA_ARGS__)
#define OPKIT_TILING_KEY_8(a, ...) OPKIT_TILING_KEY_1(a) || OPKIT_TILING_KEY_7(__VA_ARGS__)
#define OPKIT_TILING_KEY_N(_1, _2, _3, _4, _5, _6, _7, _8, N, ...) N
#define TILING_KEY_LIST(...) \
  (OPKIT_TILING_CAT(OPKIT_TILING_KEY_, OPKIT_TILING_KEY_N(__VA_ARGS__, 8, 7, 6, 5, 4, 3, 2, 1, 0))(__VA_ARGS__))
