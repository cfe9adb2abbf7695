// opkit's CPU stand-in of CANN's graph/operator.h (hicann/metadef inc/external/graph/operator.h; read, not
// copied): ops-nn's common/inc/error_util.h includes it for its log macros; op_host tiling code uses nothing of
// ge::Operator, so the class holds a name and a type only (a graph-mode op is not run here).
#ifndef OPKIT_CANN_GRAPH_OPERATOR_H
#define OPKIT_CANN_GRAPH_OPERATOR_H
#include <string>

#include "graph/ascend_string.h"
#include "graph/ge_error_codes.h"
#include "graph/types.h"

namespace ge {
class Operator {
 public:
  Operator() = default;
  explicit Operator(const char* type) : type_(type ? type : "") {}
  Operator(const char* name, const char* type) : name_(name ? name : ""), type_(type ? type : "") {}
  graphStatus GetName(AscendString& name) const { name = AscendString(name_.c_str()); return GRAPH_SUCCESS; }
  graphStatus GetOpType(AscendString& type) const { type = AscendString(type_.c_str()); return GRAPH_SUCCESS; }
 private:
  std::string name_, type_;
};
}  // namespace ge
#endif
