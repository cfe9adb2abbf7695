// opkit's host runner for a CANN custom-op project (docs/cann.md): linked with the project's op_host/*.cpp,
// it answers requests on stdin, one per line, with one JSON line each on the original stdout (the op's own
// printf output goes to stderr):
//   describe                         -> the registered OpDefs and the template-argument tables
//   run <op> <profile> <request...>  -> InferShape, InferDataType, then the TilingFunc on a gert::TilingContext:
//                                       block dim, tiling key, tiling bytes, workspace sizes, output shapes
// Request tokens after the profile (python/opkit/cannproject/host.py writes them):
//   <n_ir> <count per IR input>...  <n_in> [<dtype> <format> <ndim> <dims>... <nbytes> <hex|->]...
//   <n_out> [<dtype> <format> <ndim> <dims>...]...  <n_attr> [<kind> <value>...]...
//   attr kinds: i <int>, f <float>, b <0|1>, s <hex>, li <n> <ints>, lf <n> <floats>, lb <n> <0|1>..., - (unset)
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>

#include "ascendc/host_api/tiling/template_argument.h"
#include "opkit/platform.h"
#include "opkit_cann/host.h"

namespace {
FILE* g_out = nullptr;

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\', o += c;
    else if (c == '\n') o += "\\n";
    else if (static_cast<unsigned char>(c) < 0x20) o += ' ';
    else o += c;
  }
  return o;
}
template <class T> std::string list(const std::vector<T>& v) {
  std::ostringstream s;
  s << "[";
  for (size_t i = 0; i < v.size(); ++i) s << (i ? "," : "") << v[i];
  s << "]";
  return s.str();
}
std::string hex(const uint8_t* p, size_t n) {
  static const char* d = "0123456789abcdef";
  std::string o;
  for (size_t i = 0; i < n; ++i) o += d[p[i] >> 4], o += d[p[i] & 15];
  return o;
}
std::vector<uint8_t> unhex(const std::string& s) {
  std::vector<uint8_t> o;
  if (s == "-") return o;
  for (size_t i = 0; i + 1 < s.size(); i += 2) o.push_back(static_cast<uint8_t>(std::stoul(s.substr(i, 2), nullptr, 16)));
  return o;
}
const char* kinds[] = {"none", "int", "float", "bool", "str", "list_int", "list_float", "list_bool"};

std::string attr_json(const opkit_cann::AttrInfo& a) {
  std::ostringstream s;
  s << "{\"name\":\"" << esc(a.name) << "\",\"required\":" << (a.required ? "true" : "false") << ",\"kind\":\""
    << kinds[a.def.kind] << "\",\"default\":";
  switch (a.def.kind) {
    case gert::AttrValue::INT: s << a.def.i; break;
    case gert::AttrValue::FLOAT:
      if (std::isfinite(a.def.f)) s << a.def.f; else s << "null";
      break;
    case gert::AttrValue::BOOL: s << (a.def.b ? "true" : "false"); break;
    case gert::AttrValue::STR: s << "\"" << esc(a.def.s) << "\""; break;
    case gert::AttrValue::LIST_INT: s << list(a.def.li.v); break;
    case gert::AttrValue::LIST_FLOAT: s << list(a.def.lf.v); break;
    default: s << "null";
  }
  s << "}";
  return s.str();
}
std::string params_json(const std::vector<opkit_cann::ParamInfo>& ps, const std::vector<int>& data_deps = {}) {
  std::ostringstream s;
  s << "[";
  for (size_t i = 0; i < ps.size(); ++i) {
    const bool dep = ps[i].value_depend ||
                     std::find(data_deps.begin(), data_deps.end(), static_cast<int>(i)) != data_deps.end();
    s << (i ? "," : "") << "{\"name\":\"" << esc(ps[i].name) << "\",\"param_type\":" << ps[i].param_type
      << ",\"dtypes\":" << list(ps[i].dtypes) << ",\"formats\":" << list(ps[i].formats)
      << ",\"value_depend\":" << (dep ? "true" : "false")
      << ",\"init_value\":" << (ps[i].init_value ? "true" : "false") << "}";
  }
  s << "]";
  return s.str();
}
std::string tpl_param_json(const ParamStruct& p) {
  std::ostringstream s;
  s << "{\"name\":\"" << esc(p.name) << "\",\"type\":" << p.paramType << ",\"bits\":" << unsigned(p.bitWidth)
    << ",\"vals\":" << list(p.vals) << "}";
  return s.str();
}

void describe() {
  std::ostringstream s;
  s << "{\"ops\":[";
  bool first = true;
  for (auto& kv : opkit_cann::registry()) {
    const auto& o = kv.second;
    const bool tiling = o.tiling || opkit_cann::impl_tiling().count(o.type);
    const auto inf = opkit_cann::impl_infer().find(o.type);
    const bool has_inf = inf != opkit_cann::impl_infer().end();
    s << (first ? "" : ",") << "{\"type\":\"" << esc(o.type) << "\",\"inputs\":" << params_json(o.inputs, opkit_cann::impl_data_deps()[o.type])
      << ",\"outputs\":" << params_json(o.outputs) << ",\"attrs\":[";
    for (size_t i = 0; i < o.attrs.size(); ++i) s << (i ? "," : "") << attr_json(o.attrs[i]);
    s << "],\"socs\":[";
    for (size_t i = 0; i < o.socs.size(); ++i) s << (i ? "," : "") << "\"" << esc(o.socs[i]) << "\"";
    s << "],\"tiling\":" << (tiling ? "true" : "false")
      << ",\"infer_shape\":" << ((o.infer_shape || (has_inf && inf->second.first)) ? "true" : "false")
      << ",\"infer_dtype\":" << ((o.infer_dtype || (has_inf && inf->second.second)) ? "true" : "false") << "}";
    first = false;
  }
  s << "],\"tiling_only\":[";
  first = true;
  for (auto& kv : opkit_cann::impl_tiling()) {
    if (opkit_cann::registry().count(kv.first)) continue;
    s << (first ? "" : ",") << "\"" << esc(kv.first) << "\"";
    first = false;
  }
  s << "],\"tpl\":";
  const auto& t = opkit_cann::tpl_tables();
  if (!t.decl) {
    s << "null";
  } else {
    s << "{\"decl\":[";
    for (size_t i = 0; i < t.decl->size(); ++i) s << (i ? "," : "") << tpl_param_json((*t.decl)[i]);
    s << "],\"sel\":[";
    if (t.sel)
      for (size_t i = 0; i < t.sel->size(); ++i) {
        s << (i ? "," : "") << "[";
        for (size_t j = 0; j < (*t.sel)[i].size(); ++j) s << (j ? "," : "") << tpl_param_json((*t.sel)[i][j]);
        s << "]";
      }
    s << "]}";
  }
  s << "}";
  std::fprintf(g_out, "%s\n", s.str().c_str());
}

void fail(const std::string& stage, const std::string& msg) {
  std::fprintf(g_out, "{\"status\":1,\"stage\":\"%s\",\"message\":\"%s\"}\n", stage.c_str(), esc(msg).c_str());
}

void read_shape(std::istream& in, gert::StorageShape& sh) {
  size_t nd = 0;
  in >> nd;
  gert::Shape s;
  for (size_t i = 0; i < nd; ++i) {
    int64_t d = 0;
    in >> d;
    s.AppendDim(d);
  }
  sh.MutableOriginShape() = s;
  sh.MutableStorageShape() = s;
}

void run(std::istream& in) {
  gert::OpCall call;
  std::string profile;
  in >> call.op_type >> profile;
  const opkit::Platform& chip = profile == "ascend310p" ? opkit::kAscend310P : opkit::kAscend910B;
  call.platform.soc = chip.soc;
  call.platform.core_aiv = chip.vector_cores;
  call.platform.core_num = chip.vector_cores;
  call.platform.core_aic = profile == "ascend310p" ? chip.vector_cores : chip.vector_cores / 2;
  call.platform.ub_bytes = chip.ub_total_bytes;
  call.platform.soc_kind = profile == "ascend310p" ? 2 : 1;
  size_t n = 0;
  in >> n;
  call.input_instance.resize(n);
  for (auto& c : call.input_instance) in >> c;
  in >> n;
  call.inputs.resize(n);
  for (auto& t : call.inputs) {
    int dt = 0, fmt = 0;
    std::string data;
    size_t nbytes = 0;
    in >> dt >> fmt;
    read_shape(in, t.shape);
    in >> nbytes >> data;
    t.dtype = static_cast<ge::DataType>(dt);
    t.format.origin = t.format.storage = static_cast<ge::Format>(fmt);
    t.data = unhex(data);
    gert::CompileTimeTensorDesc d;
    d.dtype = t.dtype;
    d.format = t.format;
    call.input_desc.push_back(d);
  }
  in >> n;
  call.outputs.resize(n);
  for (auto& t : call.outputs) {
    int dt = 0, fmt = 0;
    in >> dt >> fmt;
    read_shape(in, t.shape);
    t.dtype = static_cast<ge::DataType>(dt);
    t.format.origin = t.format.storage = static_cast<ge::Format>(fmt);
    gert::CompileTimeTensorDesc d;
    d.dtype = t.dtype;
    d.format = t.format;
    call.output_desc.push_back(d);
  }
  in >> n;
  call.attrs.attrs.resize(n);
  for (auto& a : call.attrs.attrs) {
    std::string k;
    in >> k;
    if (k == "i") { a.kind = gert::AttrValue::INT; in >> a.i; }
    else if (k == "f") { a.kind = gert::AttrValue::FLOAT; in >> a.f; }
    else if (k == "b") { a.kind = gert::AttrValue::BOOL; int b; in >> b; a.b = b != 0; }
    else if (k == "s") { a.kind = gert::AttrValue::STR; std::string h; in >> h; auto v = unhex(h); a.s.assign(v.begin(), v.end()); }
    else if (k == "li") { a.kind = gert::AttrValue::LIST_INT; size_t m; in >> m; a.li.v.resize(m); for (auto& x : a.li.v) in >> x; }
    else if (k == "lf") { a.kind = gert::AttrValue::LIST_FLOAT; size_t m; in >> m; a.lf.v.resize(m); for (auto& x : a.lf.v) in >> x; }
    else if (k == "lb") { a.kind = gert::AttrValue::LIST_BOOL; size_t m; in >> m; a.lb.v.resize(m); for (size_t i = 0; i < m; ++i) { int b; in >> b; a.lb.v[i] = b != 0; } }
  }
  if (!in) return fail("request", "malformed request line");

  auto reg = opkit_cann::registry().find(call.op_type);
  opkit_cann::TilingFn tiling;
  opkit_cann::InferShapeFn infer_shape;
  opkit_cann::InferDtypeFn infer_dtype;
  if (reg != opkit_cann::registry().end()) {
    tiling = reg->second.tiling;
    infer_shape = reg->second.infer_shape;
    infer_dtype = reg->second.infer_dtype;
  }
  auto it = opkit_cann::impl_tiling().find(call.op_type);
  if (!tiling && it != opkit_cann::impl_tiling().end()) tiling = it->second;
  auto inf = opkit_cann::impl_infer().find(call.op_type);
  if (inf != opkit_cann::impl_infer().end()) {
    if (!infer_shape) infer_shape = inf->second.first;
    if (!infer_dtype) infer_dtype = inf->second.second;
  }
  if (!tiling) return fail("tiling", "no tiling function registered for " + call.op_type +
                                          " (OpDef AICore().SetTiling or IMPL_OP_OPTILING)");
  if (infer_shape) {
    gert::InferShapeContext ctx(&call);
    if (infer_shape(&ctx) != ge::GRAPH_SUCCESS) return fail("infer_shape", "InferShape returned GRAPH_FAILED");
    for (auto& o : call.outputs) o.shape.MutableStorageShape() = o.shape.GetOriginShape();
  }
  if (infer_dtype) {
    gert::InferDataTypeContext ctx(&call);
    if (infer_dtype(&ctx) != ge::GRAPH_SUCCESS) return fail("infer_dtype", "InferDataType returned GRAPH_FAILED");
  }
  gert::TilingContext ctx(&call);
  std::shared_ptr<void> compile_info;
  auto parse = opkit_cann::impl_tiling_parse().find(call.op_type);
  if (parse != opkit_cann::impl_tiling_parse().end()) {
    gert::TilingParseContext pctx(&call);
    if (parse->second(&pctx, compile_info) != ge::GRAPH_SUCCESS)
      return fail("tiling parse", "TilingParse returned GRAPH_FAILED");
    ctx.compile_info = compile_info.get();
  }
  if (tiling(&ctx) != ge::GRAPH_SUCCESS) return fail("tiling", "TilingFunc returned GRAPH_FAILED");
  std::vector<size_t> ws(ctx.workspace.begin(), ctx.workspace.begin() + ctx.workspace_num);
  std::ostringstream s;
  s << "{\"status\":0,\"block_dim\":" << ctx.block_dim << ",\"tiling_key\":" << ctx.tiling_key
    << ",\"schedule_mode\":" << ctx.schedule_mode << ",\"data_size\":" << ctx.tiling.GetDataSize()
    << ",\"tiling\":\"" << hex(static_cast<const uint8_t*>(ctx.tiling.GetData()), ctx.tiling.GetDataSize())
    << "\",\"workspace\":" << list(ws) << ",\"outputs\":[";
  for (size_t i = 0; i < call.outputs.size(); ++i) {
    const auto& sh = call.outputs[i].shape.GetStorageShape();
    std::vector<int64_t> dims;
    for (size_t d = 0; d < sh.GetDimNum(); ++d) dims.push_back(sh.GetDim(d));
    s << (i ? "," : "") << "{\"dtype\":" << call.outputs[i].dtype << ",\"shape\":" << list(dims) << "}";
  }
  s << "]}";
  std::fprintf(g_out, "%s\n", s.str().c_str());
}
}  // namespace

int main() {
  // Responses go to the original stdout; whatever the op's code prints goes to stderr.
  g_out = fdopen(dup(1), "w");
  dup2(2, 1);
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::string cmd;
    in >> cmd;
    try {
      if (cmd == "describe") describe();
      else if (cmd == "run") run(in);
      else if (!cmd.empty()) fail("request", "unknown command " + cmd);
    } catch (const std::exception& e) {
      fail("exception", std::string("C++ exception from the op's host code: ") + e.what());
    }
    std::fflush(g_out);
    std::fflush(stdout);
  }
  return 0;
}
