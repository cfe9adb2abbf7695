// Kernel side of CANN's register/tilingdata_base.h: an op_host tiling header included in the kernel's
// translation unit defines the struct CANN's build would generate for the kernel from it.
//
// What CANN does (sources read, not copied):
//   hicann/metadef inc/external/register/tilingdata_base.h + base/asc/tilingdata_base_impl.cc -- on the host,
//     BEGIN_TILING_DATA_DEF(C) is a class whose fields are laid out in declaration order; before each field
//     CheckAlignAndGenPlaceHolder pads the running size to the field's type size (a struct field: to 8), and
//     after the last one to 8 (the "<C>PH" placeholder); GetDataSize() is that size; SaveToBuffer copies it.
//   mirror-cann/asc-devkit tools/build/asc_op_compile_base/adapter/get_op_tiling.py -- from that field list
//     (placeholders included) the build writes `class C { public: T f; T a[N]; S s; ... }
//     __attribute__((__may_alias__));` at global scope into the kernel's tiling header, the nested structs
//     before it.
// Here: the same members in the same order, each at its natural alignment, struct members at 8, the class
// aligned to 8 -- so offsetof/sizeof equal the host's offsets and GetDataSize(). The header's own
// `namespace optiling { ... }` stays; `using namespace optiling` makes its structs visible at global scope
// as in the generated header. REGISTER_TILING_DATA_CLASS(Op, C) names C as the op's default struct for
// GET_TILING_DATA (opkit_emu/tiling_macros.h says how the default is chosen).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "opkit_emu/tiling_macros.h"

namespace optiling {}
using namespace optiling;

#define BEGIN_TILING_DATA_DEF(class_name) \
  class __attribute__((__may_alias__, __aligned__(8))) class_name { \
   public:
#define TILING_DATA_FIELD_DEF(data_type, field_name) data_type field_name;
#define TILING_DATA_FIELD_DEF_ARR(arr_type, arr_size, field_name) arr_type field_name[arr_size];
#define TILING_DATA_FIELD_DEF_STRUCT(struct_type, field_name) alignas(8) struct_type field_name;
#define END_TILING_DATA_DEF \
  }                         \
  ;

#define OPKIT_TILING_REG_KIND(op_type, class_name) ::opkit_emu::tiling_reg_kind(#op_type, #class_name "Op")
#define REGISTER_TILING_DATA_CLASS(op_type, class_name)                                                         \
  class_name opkit_tiling_registered_(                                                                          \
      ::opkit_emu::TilingKind<OPKIT_TILING_REG_KIND(op_type, class_name),                                       \
                              OPKIT_TILING_REG_KIND(op_type, class_name) == 0 ? 0 : __COUNTER__ + 1>, long);
