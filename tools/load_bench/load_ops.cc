#include "tools/load_bench/load_ops.h"

#include <stdexcept>
#include <utility>
#include <vector>

namespace zkraft::tools {

namespace {
const std::vector<std::pair<LoadOp, const char*>>& names() {
  static const std::vector<std::pair<LoadOp, const char*>> n = {
      {LoadOp::kCreate, "create"}, {LoadOp::kCreateSeq, "createseq"}, {LoadOp::kSet, "set"},
      {LoadOp::kGet, "get"},       {LoadOp::kExists, "exists"},       {LoadOp::kList, "list"},
      {LoadOp::kDelete, "delete"}, {LoadOp::kMixed, "mixed"},         {LoadOp::kChurn, "churn"},
      {LoadOp::kWatch, "watch"}};
  return n;
}
}  // namespace

const char* op_name(LoadOp op) {
  for (const auto& [o, n] : names()) {
    if (o == op) return n;
  }
  return "?";
}

std::optional<LoadOp> parse_op(const std::string& name) {
  for (const auto& [o, n] : names()) {
    if (name == n) return o;
  }
  return std::nullopt;
}

std::optional<Mix> parse_mix(const std::string& spec, std::string& why) {
  Mix m{0, 0, 0, 0, 0, 0};
  size_t start = 0;
  while (start < spec.size()) {
    size_t comma = spec.find(',', start);
    std::string item = spec.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    start = comma == std::string::npos ? spec.size() : comma + 1;
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string::npos) {
      why = "expected name=weight, got '" + item + "'";
      return std::nullopt;
    }
    std::string key = item.substr(0, eq);
    int value = 0;
    try {
      size_t used = 0;
      value = std::stoi(item.substr(eq + 1), &used);
      if (used != item.size() - eq - 1 || value < 0) throw std::invalid_argument("");
    } catch (...) {
      why = "bad weight in '" + item + "'";
      return std::nullopt;
    }
    int* slot = key == "create" ? &m.create
              : key == "set"    ? &m.set
              : key == "get"    ? &m.get
              : key == "list"   ? &m.list
              : key == "delete" ? &m.del
              : key == "exists" ? &m.exists
                                : nullptr;
    if (slot == nullptr) {
      why = "unknown op '" + key + "' (create, set, get, list, delete, exists)";
      return std::nullopt;
    }
    *slot = value;
  }
  if (m.total() <= 0) {
    why = "the mix has no weight";
    return std::nullopt;
  }
  return m;
}

LoadOp pick(const Mix& mix, int draw) {
  const std::pair<int, LoadOp> order[] = {{mix.create, LoadOp::kCreate}, {mix.set, LoadOp::kSet},
                                          {mix.get, LoadOp::kGet},       {mix.list, LoadOp::kList},
                                          {mix.del, LoadOp::kDelete},    {mix.exists, LoadOp::kExists}};
  for (const auto& [w, op] : order) {
    if (draw < w) return op;
    draw -= w;
  }
  return LoadOp::kGet;  // draw out of range: the caller's bug, answered with the cheapest op
}

}  // namespace zkraft::tools
