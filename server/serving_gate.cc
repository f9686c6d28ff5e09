#include "server/serving_gate.h"

#include <algorithm>


namespace zkraft::server {

std::string_view serving_mode_name(ServingMode m) {
  switch (m) {
    case ServingMode::kServing: return "serving";
    case ServingMode::kCutOff: return "cut off";
    case ServingMode::kReadOnly: return "read-only";
  }
  return "?";
}

ServingPolicy ServingPolicy::from_config(const Config& config) {
  ServingPolicy p;
  const int64_t wanted = config.min_session_timeout() / 3;
  p.contact_bound_ms = std::max(kMinContactBoundMs, wanted);
  p.bound_is_floored = wanted < kMinContactBoundMs;
  p.read_only_enabled = config.read_only_mode;
  p.read_only_grace_ms = std::max<int64_t>(2000, config.tick_time_ms);
  return p;
}

std::optional<ServingGate::Change> ServingGate::update(int64_t age_ms, int64_t now_ms) {
  ServingMode next = ServingMode::kServing;
  if (age_ms > policy_.contact_bound_ms) {
    // The grace counts from when this gate first saw the server cut off (at start, or when the
    // bound was passed), as ZooKeeper's counts from entering LOOKING.
    if (mode_ == ServingMode::kServing || !cut_off_since_ms_) cut_off_since_ms_ = now_ms;
    const bool grace_over = now_ms - *cut_off_since_ms_ > policy_.read_only_grace_ms;
    next = policy_.read_only_enabled && grace_over ? ServingMode::kReadOnly : ServingMode::kCutOff;
    if (mode_ == ServingMode::kReadOnly) next = ServingMode::kReadOnly;  // only contact ends it
  } else {
    cut_off_since_ms_.reset();
  }
  if (next == mode_) return std::nullopt;
  Change c{mode_, next};
  mode_ = next;
  return c;
}

}  // namespace zkraft::server
