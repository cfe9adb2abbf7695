// opkit's CPU stand-in of opbase's operator log header (CANN ships it as include/op_common/log/log.h, reached as
// "log/log.h" or "op_common/log/log.h"; FindOPBASE.cmake puts include/op_common on the op's include path).
// Written after hicann/opbase@aa3cd74 include/op_common/log/log.h (read, not copied): the names the op_host code
// of ops-math / ops-nn uses -- OP_LOGD/I/W/E (l.1074-1082), OP_CHECK_IF (l.1083), OP_CHECK_NULL_WITH_CONTEXT
// (l.1090), the OP_LOGE_WITH_* / OP_LOGE_FOR_* error-code family (l.130-1028), OP_LOGE_WITHOUT_REPORT,
// Ops::Base::ToString (l.1100). CANN's log goes to its dlog daemon; here an error or warning goes to stderr,
// which the host runner keeps and shows when a TilingFunc fails, and debug/info lines are dropped.
#pragma once
#define OP_COMMON_LOG_LOG_H  // opbase's own header, if a path reaches it, adds nothing
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>
#include "opkit_cann/host.h"

#ifndef DLOG_DEBUG
#define DLOG_DEBUG 0
#endif
#ifndef DLOG_INFO
#define DLOG_INFO 1
#endif
#ifndef DLOG_WARN
#define DLOG_WARN 2
#endif
#ifndef DLOG_ERROR
#define DLOG_ERROR 3
#endif
#ifndef OP_SUBMOD_NAME
#define OP_SUBMOD_NAME "OPS_BASE"
#endif

constexpr int32_t OP_MODULE_ID = 63;

namespace Ops {
namespace Base {

inline const char* GetSafeStr(const char* s) { return s == nullptr ? "nil" : s; }
inline const char* GetSafeStr(const std::string& s) { return s.c_str(); }

inline const std::string& GetOpInfo(const std::string& s) { return s; }
inline const char* GetOpInfo(const char* s) { return s == nullptr ? "nil" : s; }
inline const char* GetOpInfo(char* s) { return s == nullptr ? "nil" : s; }
// a context (TilingContext*, InferShapeContext*, ...): "type:name" as CANN prints it
template <class T, typename std::enable_if<std::is_pointer<T>::value &&
                                           !std::is_same<typename std::decay<T>::type, char*>::value &&
                                           !std::is_same<typename std::decay<T>::type, const char*>::value,
                                           int>::type = 0>
inline std::string GetOpInfo(T context) {
    if (context == nullptr) return "nil:nil";
    std::string s = context->GetNodeType() != nullptr ? context->GetNodeType() : "nil";
    return s + ":" + (context->GetNodeName() != nullptr ? context->GetNodeName() : "nil");
}

// fmt may be absent: ops-math writes OP_LOGI("message") with the message as the op name
inline void OpkitLog(int level, const std::string& who, const char* fmt = "", ...) {
    if (level < DLOG_WARN) return;   // debug / info: CANN's default log level drops them too
    std::fprintf(stderr, "[%s] %s: ", level == DLOG_ERROR ? "ERROR" : "WARNING", who.c_str());
    va_list ap;
    va_start(ap, fmt);
    std::vfprintf(stderr, fmt, ap);
    va_end(ap);
    std::fputc('\n', stderr);
}

// the error-code family: one line naming the check and its arguments
// (opbase's macros take each argument as a string or a number: `static_cast<int64_t>(n)` for a tensor count)
inline std::string ReportArg(const std::string& s) { return s; }
inline std::string ReportArg(const char* s) { return s ? s : "nil"; }
template <class T, class = std::enable_if_t<std::is_arithmetic_v<T> || std::is_enum_v<T>>>
inline std::string ReportArg(T v) {
    if constexpr (std::is_enum_v<T>) return std::to_string(static_cast<long long>(v));
    else return std::to_string(v);
}
template <class... A>
inline void OpkitReport(const char* what, const std::string& who, const A&... args) {
    std::string line;
    ((line += (line.empty() ? "" : ", ") + ReportArg(args)), ...);
    std::fprintf(stderr, "[ERROR] %s: %s(%s)\n", who.c_str(), what, line.c_str());
}

inline std::string ToString(ge::DataType type) { return std::to_string(static_cast<int>(type)); }
inline std::string ToString(ge::Format format) { return std::to_string(static_cast<int>(format)); }
inline std::string ToString(const gert::Shape& shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.GetDimNum(); ++i) s += (i ? "," : "") + std::to_string(shape.GetDim(i));
    return s + "]";
}
inline std::string ToString(const std::vector<const gert::Shape*>& v) {
    std::string s;
    for (const auto* p : v) s += (s.empty() ? "" : ",") + (p ? ToString(*p) : std::string("nil"));
    return s;
}

}  // namespace Base
}  // namespace Ops

#ifndef unlikely
#define unlikely(x) __builtin_expect((x), 0)
#endif
#ifndef likely
#define likely(x) __builtin_expect((x), 1)
#endif

#define OPKIT_OP_LOG(level, opName, ...) \
    ::Ops::Base::OpkitLog(level, std::string(::Ops::Base::GetOpInfo(opName)), ##__VA_ARGS__)
#define OP_LOGD(opName, ...) OPKIT_OP_LOG(DLOG_DEBUG, opName, ##__VA_ARGS__)
#define OP_LOGI(opName, ...) OPKIT_OP_LOG(DLOG_INFO, opName, ##__VA_ARGS__)
#define OP_LOGW(opName, ...) OPKIT_OP_LOG(DLOG_WARN, opName, ##__VA_ARGS__)
#define OP_LOGE(opName, ...) OPKIT_OP_LOG(DLOG_ERROR, opName, ##__VA_ARGS__)
#define OP_LOGE_WITHOUT_REPORT(opName, ...) OP_LOGE(opName, ##__VA_ARGS__)
#define OP_LOGE_LIBOPAPI_REPORT(opName, ...) OP_LOGE(opName, ##__VA_ARGS__)
#define D_OP_LOGD(opName, ...) OP_LOGD(opName, ##__VA_ARGS__)
#define D_OP_LOGI(opName, ...) OP_LOGI(opName, ##__VA_ARGS__)
#define D_OP_LOGW(opName, ...) OP_LOGW(opName, ##__VA_ARGS__)
#define D_OP_LOGE(opName, ...) OP_LOGE(opName, ##__VA_ARGS__)

#define OP_CHECK_IF(condition, log, return_expr) \
    do {                                         \
        if (unlikely(condition)) {               \
            log;                                 \
            return_expr;                         \
        }                                        \
    } while (0)

#define OP_CHECK_NULL_WITH_CONTEXT(context, ptr)                                                 \
    do {                                                                                         \
        if (unlikely((ptr) == nullptr)) {                                                        \
            OP_LOGE(((context) == nullptr ? "nil" : (context)->GetNodeName()), "%s is nullptr!", #ptr); \
            return ge::GRAPH_FAILED;                                                             \
        }                                                                                        \
    } while (0)

#define OPKIT_OP_REPORT(what, entity, ...) ::Ops::Base::OpkitReport(what, std::string(entity), __VA_ARGS__)
#define OP_LOGE_WITH_INVALID_INPUT_SHAPE(e, ...) OPKIT_OP_REPORT("invalid input shape", e, __VA_ARGS__)
#define OP_LOGE_WITH_INVALID_ATTR(e, ...) OPKIT_OP_REPORT("invalid attr", e, __VA_ARGS__)
#define OP_LOGE_WITH_INVALID_ATTR_SIZE(e, ...) OPKIT_OP_REPORT("invalid attr size", e, __VA_ARGS__)
#define OP_LOGE_WITH_INVALID_INPUT(e, ...) OPKIT_OP_REPORT("invalid input", e, __VA_ARGS__)
#define OP_LOGE_WITH_INVALID_INPUT_SHAPESIZE(e, ...) OPKIT_OP_REPORT("invalid input shape size", e, __VA_ARGS__)
#define OP_LOGE_WITH_INVALID_INPUT_FORMAT(e, ...) OPKIT_OP_REPORT("invalid input format", e, __VA_ARGS__)
#define OP_LOGE_WITH_INVALID_INPUT_DTYPE(e, ...) OPKIT_OP_REPORT("invalid input dtype", e, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_SHAPE(e, ...) OPKIT_OP_REPORT("invalid shape", e, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_SHAPE_WITH_REASON(e, ...) OPKIT_OP_REPORT("invalid shape", e, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_SHAPES_WITH_REASON(e, ...) OPKIT_OP_REPORT("invalid shapes", e, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_SHAPEDIM(e, ...) OPKIT_OP_REPORT("invalid shape dim", e, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_SHAPEDIM_WITH_REASON(e, ...) OPKIT_OP_REPORT("invalid shape dim", e, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_SHAPEDIMS_WITH_REASON(e, ...) OPKIT_OP_REPORT("invalid shape dims", e, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_SHAPESIZE(e, ...) OPKIT_OP_REPORT("invalid shape size", e, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_SHAPESIZE_WITH_REASON(e, ...) OPKIT_OP_REPORT("invalid shape size", e, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_SHAPESIZES_WITH_REASON(e, ...) OPKIT_OP_REPORT("invalid shape sizes", e, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_FORMAT(e, ...) OPKIT_OP_REPORT("invalid format", e, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_FORMAT_WITH_REASON(e, ...) OPKIT_OP_REPORT("invalid format", e, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_FORMATS_WITH_REASON(e, ...) OPKIT_OP_REPORT("invalid formats", e, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_DTYPE(e, ...) OPKIT_OP_REPORT("invalid dtype", e, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_DTYPE_WITH_REASON(e, ...) OPKIT_OP_REPORT("invalid dtype", e, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_DTYPES_WITH_REASON(e, ...) OPKIT_OP_REPORT("invalid dtypes", e, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_TENSORNUM(e, ...) OPKIT_OP_REPORT("invalid tensor count", e, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_TENSORNUMS_WITH_REASON(e, ...) OPKIT_OP_REPORT("invalid tensor counts", e, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_VALUE(e, ...) OPKIT_OP_REPORT("invalid value", e, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_LISTSIZE(e, ...) OPKIT_OP_REPORT("invalid list size", e, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_LISTSIZE_WITH_REASON(e, ...) OPKIT_OP_REPORT("invalid list size", e, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_VALUE_WITH_REASON(e, ...) OPKIT_OP_REPORT("invalid value", e, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_VALUES_WITH_REASON(e, ...) OPKIT_OP_REPORT("invalid values", e, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_STRIDE(e, ...) OPKIT_OP_REPORT("invalid stride", e, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_ARGUMENT_WITH_REASON(e, ...) OPKIT_OP_REPORT("invalid argument", e, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_GRAPH_NODE(e, ...) OPKIT_OP_REPORT("invalid graph node", e, __VA_ARGS__)
#define OP_LOGE_FOR_FILE_PATH(e, ...) OPKIT_OP_REPORT("file path", e, __VA_ARGS__)
#define OP_LOGE_FOR_FILE_OPEN(e, ...) OPKIT_OP_REPORT("file open", e, __VA_ARGS__)
#define OP_LOGE_FOR_FILE_PARSE(e, ...) OPKIT_OP_REPORT("file parse", e, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_CONFIG(e, ...) OPKIT_OP_REPORT("invalid config", e, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_CONFIG_WITH_REASON(e, ...) OPKIT_OP_REPORT("invalid config", e, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_CONFIGS_WITH_REASON(e, ...) OPKIT_OP_REPORT("invalid configs", e, __VA_ARGS__)
