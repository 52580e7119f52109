#pragma once
// OperationRole: whether an operation is primal or a linearized (tangent/cotangent) application.
// The role is part of an operation's identity (DESIGN.md "Identity"): Mul(a, b) and Mul(a, dx) with
// active_mask=[fixed, active] both multiply, but transpose differently and so must never alias.
#include <cstddef>
#include <string>
#include <vector>

namespace computegraph {

class OperationRole {
 public:
  /// A primal operation.
  static OperationRole primary() { return OperationRole(); }
  /// A linear operation; `active_mask[i]` says whether input i carries tangent flow.
  static OperationRole linearized(std::vector<bool> active_mask) {
    OperationRole role;
    role.linearized_ = true;
    role.active_mask_ = std::move(active_mask);
    return role;
  }

  bool is_primary() const { return !linearized_; }
  bool is_linearized() const { return linearized_; }
  /// Empty for primary operations.
  const std::vector<bool>& active_mask() const { return active_mask_; }
  bool is_active(std::size_t input) const {
    return linearized_ && input < active_mask_.size() && active_mask_[input];
  }

  bool operator==(const OperationRole&) const = default;
  std::size_t hash() const {
    std::size_t h = linearized_ ? 0x9e3779b97f4a7c15ULL : 0x51ed270b7f4a7c15ULL;
    for (bool b : active_mask_) h = h * 1099511628211ULL + (b ? 2 : 1);
    return h;
  }
  /// "" for primary, "linearized[fixed, active]" otherwise.
  std::string to_string() const {
    if (!linearized_) return "";
    std::string s = "linearized[";
    for (std::size_t i = 0; i < active_mask_.size(); ++i) {
      if (i) s += ", ";
      s += active_mask_[i] ? "active" : "fixed";
    }
    return s + "]";
  }

 private:
  OperationRole() = default;
  bool linearized_ = false;
  std::vector<bool> active_mask_;
};

}  // namespace computegraph
